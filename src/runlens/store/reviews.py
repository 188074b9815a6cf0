"""Reviews in the run store (SPEC section 17): the reviewers, each run's signed review lines
and its review state, and the queue of runs awaiting review (a run's review state is written by
`runlens.store.lifecycle`, as every write of a run's row).

A run's review ledger is one chain of signed lines (`runlens.review`), keyed here by
`(run_id, seq)`: two reviewers appending at once cannot both take one `seq`, so the second
is told (`append_review_line` returns False) and signs again on top of the first. The store
keeps the lines as signed; what they say is `runlens.review`'s to read.

A reviewer's UI token is stored only as its SHA-256 (`token_sha256`): whoever reads the
database cannot sign in with it.
"""

from __future__ import annotations

from typing import Final, Protocol

import sqlalchemy as sa

from runlens.records.io import utc_now
from runlens.store import tables as t
from runlens.store.engine import StoreBase
from runlens.store.rows import ReviewerRow, RunSummary, summary_of

__all__ = ["AWAITING", "REVIEW_STATES", "ReviewRows", "SignedLine"]

#: A run's review states (`runlens.review.entries.REVIEW_STATES` holds the same).
REVIEW_STATES: Final = ("unreviewed", "approved", "changes-requested", "rejected")
#: The review states of a run that awaits a reviewer.
AWAITING: Final = ("unreviewed", "changes-requested")
#: The statuses of a run that may have been judged (it signs a verdict when it was).
_JUDGED: Final = ("completed", "failed", "cancelled")
#: An artifact the validators judged (a run that never reached them has none).
_VALIDATED: Final = ("validated", "rejected")


class SignedLine(Protocol):
    """What the store keeps of a review line (`runlens.review.entries.ReviewEntry`)."""

    @property
    def seq(self) -> int: ...
    @property
    def created_at(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def reviewer(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def line(self) -> str: ...


class ReviewRows(StoreBase):
    """The store's reviewers and review lines."""

    # -- reviewers -------------------------------------------------------------------------

    def add_reviewer(self, name: str, keyid: str, public_key_pem: str, token_sha256: str) -> None:
        """A new reviewer; `ValueError` when the name (or the token) is taken."""
        row = {
            "name": name,
            "keyid": keyid,
            "public_key": public_key_pem,
            "token_sha256": token_sha256,
            "created_at": utc_now(),
        }
        statement = self._insert(t.reviewers).values(**row).on_conflict_do_nothing()
        with self._write() as connection:
            written = connection.execute(statement.returning(t.reviewers.c.name)).first()
        if written is None:
            raise ValueError(f"a reviewer named {name!r} (or with that token) exists already")

    def reviewer_for_token(self, token_sha256: str) -> ReviewerRow | None:
        """The reviewer whose UI token has this SHA-256; None for none."""
        return self._reviewer(t.reviewers.c.token_sha256 == token_sha256)

    def get_reviewer(self, name: str) -> ReviewerRow | None:
        return self._reviewer(t.reviewers.c.name == name)

    def list_reviewers(self) -> list[ReviewerRow]:
        """Every reviewer, by name."""
        with self._read() as connection:
            rows = connection.execute(sa.select(t.reviewers).order_by(t.reviewers.c.name)).all()
        return [_reviewer_of(row) for row in rows]

    def _reviewer(self, where: sa.ColumnElement[bool]) -> ReviewerRow | None:
        with self._read() as connection:
            row = connection.execute(sa.select(t.reviewers).where(where)).first()
        return _reviewer_of(row) if row is not None else None

    # -- a run's review lines --------------------------------------------------------------

    def review_lines(self, run_id: str) -> list[str]:
        """The run's signed review lines, by `seq`."""
        with self._read() as connection:
            lines = connection.execute(
                sa.select(t.reviews.c.line)
                .where(t.reviews.c.run_id == run_id)
                .order_by(t.reviews.c.seq)
            ).scalars()
            return [str(line) for line in lines]

    def append_review_line(self, run_id: str, entry: SignedLine) -> bool:
        """Add the run's next signed line; False, and nothing written, when its `seq` is
        taken (another reviewer's line came first: sign again on top of it)."""
        row = {
            "run_id": run_id,
            "seq": entry.seq,
            "created_at": entry.created_at,
            "kind": entry.kind,
            "reviewer": entry.reviewer,
            "digest": entry.digest,
            "line": entry.line,
        }
        statement = self._insert(t.reviews).values(**row).on_conflict_do_nothing()
        with self._write() as connection:
            written = connection.execute(statement.returning(t.reviews.c.seq)).first()
        return written is not None

    def replace_review_lines(self, run_id: str, lines: list[tuple[SignedLine, str]]) -> None:
        """The run's review lines as its workspace's `runtime/reviews.jsonl` holds them
        (`runlens.store.sync`): each `(entry, line)` replaces what the store held."""
        with self._write() as connection:
            connection.execute(sa.delete(t.reviews).where(t.reviews.c.run_id == run_id))
            if lines:
                connection.execute(
                    sa.insert(t.reviews),
                    [
                        {
                            "run_id": run_id,
                            "seq": entry.seq,
                            "created_at": entry.created_at,
                            "kind": entry.kind,
                            "reviewer": entry.reviewer,
                            "digest": entry.digest,
                            "line": line,
                        }
                        for entry, line in lines
                    ],
                )

    # -- the queue -------------------------------------------------------------------------

    def review_queue(
        self, *, plugin: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[RunSummary]:
        """The runs awaiting review, oldest first: judged by the validators (completed, or
        failed or cancelled after validation: a deliverable was validated or rejected) and
        `unreviewed` or `changes-requested`."""
        runs = t.runs.c
        judged = sa.exists().where(
            t.artifacts.c.run_id == runs.run_id, t.artifacts.c.status.in_(_VALIDATED)
        )
        conditions: list[sa.ColumnElement[bool]] = [
            runs.review_state.in_(AWAITING),
            sa.or_(runs.status == "completed", sa.and_(runs.status.in_(_JUDGED), judged)),
        ]
        if plugin:
            conditions.append(runs.plugin == plugin)
        if status:
            conditions.append(runs.status == status)
        with self._read() as connection:
            rows = connection.execute(
                sa.select(t.runs)
                .where(*conditions)
                .order_by(runs.created_at.asc(), runs.run_id.asc())
                .limit(max(limit, 0))
            ).all()
        return [summary_of(row._mapping) for row in rows]

    def reruns_of(self, run_id: str) -> list[str]:
        """The runs whose `rerun_of` is `run_id`, oldest first."""
        with self._read() as connection:
            ids = connection.execute(
                sa.select(t.runs.c.run_id)
                .where(t.runs.c.rerun_of == run_id)
                .order_by(t.runs.c.created_at, t.runs.c.run_id)
            ).scalars()
            return [str(run) for run in ids]


def _reviewer_of(row: sa.Row[tuple[object, ...]]) -> ReviewerRow:
    values = row._mapping
    return ReviewerRow(
        name=values["name"],
        keyid=values["keyid"],
        public_key=values["public_key"],
        created_at=values["created_at"],
    )
