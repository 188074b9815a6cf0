"""Reading runs from the run store: the runs list, one run with its results, its events and
citations, and what `runlens.store.sync` compares a workspace with (`SyncState`).

Every answer is a typed row (`runlens.store.rows`); a JSON column an older driver reads back as
text is parsed, and a value no row can hold is left out, never raised.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final, Literal

import sqlalchemy as sa

from runlens.errors import UserError
from runlens.records.status import TERMINAL, is_terminal
from runlens.store import tables as t
from runlens.store.codec import escape_text
from runlens.store.engine import StoreBase
from runlens.store.rows import ArtifactRow, CitationRow, FindingRow, RunDetail, RunSummary

#: How many run ids one `IN (...)` names at most (SQLite's bound parameters are limited).
_IDS_PER_QUERY: Final = 500

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
    ) -> tuple[list[RunSummary], int]:
        """Runs newest first, and how many match in all. `query` is a case-insensitive
        substring of the run id, input name, plugin, model or error message."""
        conditions: list[sa.ColumnElement[bool]] = []
        for column, value in (
            (t.runs.c.status, status),
            (t.runs.c.plugin, plugin),
            (t.runs.c.model, model),
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
        values = dict(row._mapping)
        return RunDetail(
            **summary_fields(values),
            plan=as_list(values.get("plan")),
            metrics=as_dict(values.get("metrics")),
            evidence_index_sha256=values.get("evidence_index_sha256"),
            source_hash=values.get("source_hash"),
            artifacts=[_artifact(a._mapping) for a in artifacts],
            findings=[_finding(f._mapping) for f in findings],
            citation_counts=as_dict(values.get("citation_counts")),
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
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(matches[:5])
            more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
            raise UserError(
                f"{text!r} matches {len(matches)} runs ({shown}{more}): give more of the id"
            )
        raise UserError(f"no run {text!r} (looked in the run store {self.url})")

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
        return [_citation(row._mapping) for row in rows]

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
            for start in range(0, len(ids), _IDS_PER_QUERY):
                found.update(
                    str(run_id)
                    for run_id in connection.execute(
                        sa.select(t.runs.c.run_id).where(
                            t.runs.c.run_id.in_(ids[start : start + _IDS_PER_QUERY]),
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


class SyncState:
    """A run as the store last heard of it, for deciding what to re-read."""

    __slots__ = ("host", "last_seq", "record_stamp", "status", "worker", "workspace")

    def __init__(
        self,
        status: str,
        last_seq: int,
        record_stamp: str | None,
        workspace: str,
        host: str | None,
        worker: str | None = None,
    ) -> None:
        self.status = status
        self.last_seq = int(last_seq or 0)
        self.record_stamp = record_stamp
        self.workspace = workspace
        self.host = host
        #: The worker holding the run: its liveness is the worker's, not a local process's.
        self.worker = worker

    @property
    def is_terminal(self) -> bool:
        return is_terminal(self.status)


def summary_fields(values: Mapping[Any, Any]) -> dict[str, Any]:
    return {
        "run_id": values["run_id"],
        "plugin": values["plugin"],
        "model": values["model"],
        "status": values["status"],
        "error_message": values.get("error_message"),
        "input_name": values.get("input_name"),
        "workspace": values.get("workspace") or "",
        "origin": values.get("origin") if values.get("origin") in ("cli", "ui", "api") else "cli",
        "host": values.get("host"),
        "created_at": values.get("created_at"),
        "finished_at": values.get("finished_at"),
        "updated_at": values.get("updated_at") or "",
        "finding_count": int(values.get("finding_count") or 0),
        "findings_by_code": {
            str(code): int(count)
            for code, count in as_dict(values.get("findings_by_code")).items()
            if isinstance(count, int)
        },
        "warnings": [str(w) for w in as_list(values.get("warnings"))],
        "problems": [str(p) for p in as_list(values.get("problems"))],
        "cancel_requested": bool(values.get("cancel_requested")),
        "last_seq": int(values.get("last_seq") or 0),
        "worker": values.get("worker"),
        "clashes": [
            str(entry["workspace"])
            for entry in as_list(values.get("clashes"))
            if isinstance(entry, dict) and isinstance(entry.get("workspace"), str)
        ],
    }


def summary_of(values: Mapping[Any, Any]) -> RunSummary:
    return RunSummary(**summary_fields(values))


def _artifact(values: Mapping[Any, Any]) -> ArtifactRow:
    return ArtifactRow(
        **{key: values[key] for key in ArtifactRow.model_fields if key in values},
    )


def _finding(values: Mapping[Any, Any]) -> FindingRow:
    fields = {key: values[key] for key in FindingRow.model_fields if key in values}
    fields["column"] = values["col"]
    fields["details"] = as_dict(values.get("details"))
    return FindingRow(**fields)


def _citation(values: Mapping[Any, Any]) -> CitationRow:
    fields = {key: values[key] for key in CitationRow.model_fields if key in values}
    fields.update(column=values["col"], start=values["start_offset"], end=values["end_offset"])
    return CitationRow(**fields)


def as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # a JSON column read back as text by an older driver
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = json.loads(value)
    return value if isinstance(value, list) else []
