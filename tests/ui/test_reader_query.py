"""The reader view reads from the store the citations of the deliverables it shows, each
artifact's from the index on `(run_id, artifact)` in order, never the whole run's.

A large run's analysis cites every row (100,000 citations) while its report cites a dozen:
the page must cost the dozen. The run here is a scripted run whose analysis and backlog
cite rows, indexed into a SQLite store and served in this process; every query
the page makes of the `citations` table is recorded and its plan asked of SQLite.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient
from tests.store.helpers import library_run

from runlens.store import open_store, sync_workspace
from runlens.ui.app import create_app
from runlens.ui.context import UIConfig
from runlens_feedback.contracts import ANALYSIS, BACKLOG, REPORT


def test_the_reader_view_asks_for_the_citations_of_what_it_shows_by_their_index(
    tmp_path: Path, feedback_csv: Path, good_documents: tuple[dict[str, Any], dict[str, Any], str]
) -> None:
    result = library_run(tmp_path / "run", feedback_csv, good_documents)
    assert result.passed, result.error_message
    url = f"sqlite:///{tmp_path / 'runlens.db'}"
    store = open_store(url)
    try:
        run_id = sync_workspace(store, tmp_path / "run")
        assert run_id is not None
        cited = Counter(citation.artifact for citation in store.citations(run_id))
        # Two deliverables cite rows; the analysis (for developers) is not on the page.
        assert cited[ANALYSIS] > 0 and cited[BACKLOG] > 0, cited

        queries: list[tuple[str, Any]] = []

        def record(
            _connection: Any,
            _cursor: Any,
            statement: str,
            parameters: Any,
            _context: Any,
            _many: bool,
        ) -> None:
            if "FROM citations" in statement:
                queries.append((statement, parameters))

        sa.event.listen(store.engine, "before_cursor_execute", record)
        app = create_app(UIConfig(store_url=url, home=tmp_path), store=store)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            page = client.get(f"/runs/{run_id}/report")
        sa.event.remove(store.engine, "before_cursor_execute", record)
        assert page.status_code == 200, page.text

        asked = [artifact for _, parameters in queries for artifact in parameters[1:]]
        assert REPORT in asked and BACKLOG in asked
        assert ANALYSIS not in asked
        assert all(len(parameters) == 2 for _, parameters in queries), queries
        with store.engine.connect() as connection:
            for statement, parameters in queries:
                plan = " | ".join(
                    str(step[-1])
                    for step in connection.exec_driver_sql(
                        f"EXPLAIN QUERY PLAN {statement}", parameters
                    )
                )
                # One artifact's rows, found by the index and read in order: no scan of the
                # run's citations, no sort.
                assert "(run_id=? AND artifact=?)" in plan, plan
                assert "TEMP B-TREE" not in plan, plan
    finally:
        store.close()
