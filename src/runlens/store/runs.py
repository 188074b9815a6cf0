"""Reading runs from the run store: the runs list, one run with its results, its events and
citations, and what `runlens.store.sync` compares a workspace with (`SyncState`).

Every answer is a typed row (`runlens.store.rows`); a JSON column an older driver reads back as
text is parsed, and a value no row can hold is left out, never raised.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final, Literal

import sqlalchemy as sa

from runlens.errors import UserError
from runlens.records.status import TERMINAL
from runlens.store import tables as t
from runlens.store.driver import IDS_PER_QUERY
from runlens.store.engine import StoreBase
from runlens.store.listing import SyncState, one_match, summary_fields
from runlens.store.rows import (
    CitationRow,
    RunDetail,
    RunSummary,
    citation_of,
    detail_of,
    summary_of,
)
from runlens.store.values import as_dict, as_list, escape_text

__all__ = ["RunReads", "SyncState", "as_dict", "as_list", "summary_fields", "summary_of"]

_TERMINAL: Final = sorted(str(status) for status in TERMINAL)
_DISTINCT: Final = {"plugin": t.runs.c.plugin, "model": t.runs.c.model}


class RunReads(StoreBase):
    """The store's reads of runs, their events and results."""

    def clash_lists(self) -> dict[str, list[str]]:
        """The runs with clashes (`set_clashes`): run id -> the folders listed."""
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.runs.c.run_id, t.runs.c.clashes).where(t.runs.c.clashes.is_not(None))
            ).all()
        lists = {
            str(row.run_id): [
                str(entry["workspace"])
                for entry in as_list(row.clashes)
                if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
            ]
            for row in rows
        }
        return {run_id: paths for run_id, paths in lists.items() if paths}

    def list_runs(
        self,
        *,
        status: str | None = None,
        plugin: str | None = None,
        model: str | None = None,
        query: str | None = None,
        limit: int = 50,
        offset: int = 0,
        review_state: str | None = None,
    ) -> tuple[list[RunSummary], int]:
        """Runs newest first, and how many match in all. `query` is a case-insensitive
        substring of the run id, input name, plugin, model or error message."""
        conditions: list[sa.ColumnElement[bool]] = []
        for column, value in (
            (t.runs.c.status, status),
            (t.runs.c.plugin, plugin),
            (t.runs.c.model, model),
            (t.runs.c.review_state, review_state),
        ):
            if value:
                conditions.append(column == value)
        if query and query.strip():
            # The columns hold escaped text (`codec`): the needle is escaped alike.
            needle = escape_text(query.strip().lower())
            conditions.append(
                sa.or_(
                    *(
                        sa.func.lower(column, type_=sa.String).contains(needle, autoescape=True)
                        for column in (
                            t.runs.c.run_id,
                            t.runs.c.input_name,
                            t.runs.c.plugin,
                            t.runs.c.model,
                            t.runs.c.error_message,
                        )
                    )
                )
            )
        where = sa.and_(sa.true(), *conditions)
        with self._read() as connection:
            total = connection.execute(
                sa.select(sa.func.count()).select_from(t.runs).where(where)
            ).scalar_one()
            rows = connection.execute(
                sa.select(t.runs)
                .where(where)
                .order_by(t.runs.c.created_at.desc(), t.runs.c.run_id.desc())
                .limit(max(limit, 0))
                .offset(max(offset, 0))
            ).all()
        return [summary_of(row._mapping) for row in rows], int(total)

    def get_run(self, run_id: str) -> RunDetail | None:
        with self._read() as connection:
            row = connection.execute(sa.select(t.runs).where(t.runs.c.run_id == run_id)).first()
            if row is None:
                return None
            artifacts = connection.execute(
                sa.select(t.artifacts)
                .where(t.artifacts.c.run_id == run_id)
                .order_by(t.artifacts.c.ordinal)
            ).all()
            findings = connection.execute(
                sa.select(t.findings)
                .where(t.findings.c.run_id == run_id)
                .order_by(t.findings.c.ordinal)
            ).all()
            reruns = connection.execute(
                sa.select(t.runs.c.run_id)
                .where(t.runs.c.rerun_of == run_id)
                .order_by(t.runs.c.created_at, t.runs.c.run_id)
            ).scalars()
            rerun_ids = [str(rerun) for rerun in reruns]
        return detail_of(
            row._mapping,
            [a._mapping for a in artifacts],
            [f._mapping for f in findings],
            rerun_ids,
        )

    def run_problems(self, run_ids: Sequence[str]) -> dict[str, list[str]]:
        """The problems the store holds for each of `run_ids` (as `get_run` gives them), in
        one read: what `index_home` reports of the runs it has just written."""
        problems: dict[str, list[str]] = {}
        with self._read() as connection:
            for start in range(0, len(run_ids), 500):
                chunk = list(run_ids[start : start + 500])
                rows = connection.execute(
                    sa.select(t.runs.c.run_id, t.runs.c.problems).where(t.runs.c.run_id.in_(chunk))
                ).all()
                for row in rows:
                    problems[row.run_id] = [str(p) for p in as_list(row.problems)]
        return problems

    def resolve_run(self, text: str) -> str:
        """The id of the run `text` names: its id, or a unique prefix or suffix of one."""
        if not text:
            raise UserError("no run '' (give a run id)")
        column = t.runs.c.run_id
        with self._read() as connection:
            exact = connection.execute(sa.select(column).where(column == text)).scalar()
            if exact is not None:
                return str(exact)
            matches = sorted(
                str(value)
                for value in connection.execute(
                    sa.select(column).where(
                        sa.or_(
                            column.startswith(text, autoescape=True),
                            column.endswith(text, autoescape=True),
                        )
                    )
                ).scalars()
            )
        return one_match(text, matches, self.url)

    def events(
        self, run_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The run's events with `seq` above `after_seq`, in order: `{seq, ts, run_id, type,
        data}` as in `events.jsonl`."""
        statement = (
            sa.select(t.events)
            .where(t.events.c.run_id == run_id, t.events.c.seq > after_seq)
            .order_by(t.events.c.seq)
        )
        if limit is not None:
            statement = statement.limit(limit)
        with self._read() as connection:
            rows = connection.execute(statement).all()
        return [
            {
                "seq": row.seq,
                "ts": row.ts,
                "run_id": row.run_id,
                "type": row.type,
                "data": as_dict(row.data),
            }
            for row in rows
        ]

    def citations(
        self, run_id: str, *, row_id: str | None = None, artifact: str | None = None
    ) -> list[CitationRow]:
        statement = sa.select(t.citations).where(t.citations.c.run_id == run_id)
        if row_id is not None:
            statement = statement.where(t.citations.c.row_id == row_id)
        if artifact is not None:
            statement = statement.where(t.citations.c.artifact == artifact)
        with self._read() as connection:
            rows = connection.execute(statement.order_by(t.citations.c.ordinal)).all()
        return [citation_of(row._mapping) for row in rows]

    def event_count(self, run_id: str) -> int:
        """How many events of the run the store holds."""
        with self._read() as connection:
            count = connection.execute(
                sa.select(sa.func.count()).select_from(t.events).where(t.events.c.run_id == run_id)
            ).scalar_one()
        return int(count)

    def cancel_requested(self, run_id: str) -> bool:
        with self._read() as connection:
            value = connection.execute(
                sa.select(t.runs.c.cancel_requested).where(t.runs.c.run_id == run_id)
            ).scalar()
        return bool(value)

    def cancels_requested(self, run_ids: Collection[str]) -> set[str]:
        """Which of `run_ids` someone asked to stop (`cancel_requested` of each, in one
        query: a process's live mirrors poll together)."""
        found: set[str] = set()
        ids = list(run_ids)
        with self._read() as connection:
            for start in range(0, len(ids), IDS_PER_QUERY):
                found.update(
                    str(run_id)
                    for run_id in connection.execute(
                        sa.select(t.runs.c.run_id).where(
                            t.runs.c.run_id.in_(ids[start : start + IDS_PER_QUERY]),
                            t.runs.c.cancel_requested,
                        )
                    ).scalars()
                )
        return found

    def distinct_values(self, field: Literal["plugin", "model"]) -> list[str]:
        column = _DISTINCT[field]
        with self._read() as connection:
            values = connection.execute(sa.select(column).distinct().order_by(column)).scalars()
            return [str(value) for value in values]

    def sync_states(
        self, run_ids: Sequence[str] | None = None, *, live: bool = False
    ) -> dict[str, SyncState]:
        """What `runlens.store.sync` compares a workspace with: per run, its status, last
        event, record stamp, workspace, host and worker (`live`: of the runs that have not
        ended only)."""
        statement = sa.select(
            t.runs.c.run_id,
            t.runs.c.status,
            t.runs.c.last_seq,
            t.runs.c.record_stamp,
            t.runs.c.workspace,
            t.runs.c.host,
            t.runs.c.worker,
        )
        if run_ids is not None:
            statement = statement.where(t.runs.c.run_id.in_(list(run_ids)))
        if live:
            statement = statement.where(
                sa.or_(t.runs.c.status.is_(None), t.runs.c.status.not_in(_TERMINAL))
            )
        with self._read() as connection:
            rows = connection.execute(statement).all()
        return {
            row.run_id: SyncState(
                row.status, row.last_seq, row.record_stamp, row.workspace, row.host, row.worker
            )
            for row in rows
        }
