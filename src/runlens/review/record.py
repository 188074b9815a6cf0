"""Recording a review (SPEC section 17): a reviewer's decision on a run or one deliverable,
or a mark on one citation, signed, chained, kept and counted.

`record_decision` and `record_mark` do it in this order:

1. check the run (it exists and was judged: it ended with a verdict), the reviewer (the run
   store knows them and this home holds their key, the one the store knows) and, for a
   decision, the plugin's review policy (`refuse_decision`: the submitter's approval);
2. hash the deliverables as they are now (the subjects the review is bound to);
3. sign the review with the `seq` and `previous` that follow the run's lines in the store,
   and append it there: the store's key `(run_id, seq)` lets one of two reviewers at once
   have a place, and the other signs again on top of it;
4. write `runtime/reviews.jsonl` from the store's lines (into the run's workspace when it is
   on this machine, else into the store's files of the run), re-sign the verdict with the
   reviews in it (the home's signing key, only over a verdict that verifies with the home's
   keys) and set the run's review state. Step 4 runs one process and thread at a time per
   workspace, so the file and the verdict always end with every line the store holds.

`run_reviews` reads a run's reviews and what they add up to now (a file changed since voids
the decisions on it); `marks_table` gives every current mark of some runs, one row per claim
and reviewer, for the export.

Everything a reviewer wrote is untrusted text: it is signed as written and escaped wherever
it is shown.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from runlens.errors import UserError
from runlens.records.status import is_terminal
from runlens.review.entries import (
    ARTIFACTS_PREFIX,
    DECISIONS,
    MARKS,
    REVIEWS_PATH,
    ReviewEntry,
    ReviewError,
    artifact_subject,
    claim_location,
    decision_payload,
    mark_payload,
    sign_entry,
)
from runlens.review.ledger import current_digests, ledger_text, next_link, parse_ledger
from runlens.review.state import ReviewRefused, ReviewSummary, refuse_decision, review_state

if TYPE_CHECKING:
    from runlens.plugins.base import Plugin
    from runlens.plugins.review import ReviewPolicy
    from runlens.store.db import RunStore
    from runlens.store.rows import RunDetail
    from runlens.verdict.keys import SigningKey

__all__ = [
    "MARK_COLUMNS",
    "RecordedReview",
    "marks_table",
    "marks_text",
    "record_decision",
    "record_mark",
    "reviews_document",
    "run_reviews",
]

#: How many times a review is signed again when other reviewers' lines keep taking its place.
_ATTEMPTS: Final = 200
#: An artifact the validators judged (a run that never reached them has none).
_JUDGED_ARTIFACT: Final = ("validated", "rejected")
#: The columns of the marks export, in order.
MARK_COLUMNS: Final = (
    "run_id",
    "artifact",
    "location",
    "row_id",
    "quote",
    "reviewer",
    "mark",
    "note",
    "correction",
    "created_at",
    "digest",
)
#: One writer of a workspace's ledger and verdict at a time in this process (the file lock
#: below orders processes; it does not order two threads of one).
_WRITING: Final = threading.Lock()


@dataclass(frozen=True)
class RecordedReview:
    """A review as recorded: the signed entry, the run's review now, whether the verdict was
    re-signed with it, and why not (`warning`) when it was not."""

    entry: ReviewEntry
    summary: ReviewSummary
    resigned: bool
    warning: str | None


# -- recording --------------------------------------------------------------------------------


def record_decision(
    store: RunStore,
    run_id: str,
    *,
    reviewer: str,
    decision: str,
    note: str,
    artifact: str | None = None,
    home: Path | None = None,
) -> RecordedReview:
    """Sign and record `reviewer`'s `decision` on the run (or on its deliverable
    `artifact`), with `note`. `ReviewRefused` when the plugin's policy forbids it;
    `UserError`/`ReviewError` naming what is wrong otherwise."""
    if decision not in DECISIONS:
        raise ReviewError(f"decision {decision!r}: use one of {', '.join(DECISIONS)}")
    run = _Run.open(store, run_id, home)
    key = _reviewer_key(store, reviewer, home)
    refuse_decision(
        run.policy,
        submitter=run.detail.submitted_by,
        reviewer=reviewer,
        decision=decision,
        run_id=run.run_id,
        plugin=run.detail.plugin,
    )
    name = run.artifact_name(artifact) if artifact is not None else None
    if decision == "approve":
        _refuse_approving_what_failed(run.detail, name)

    def payload(seq: int, previous: str | None) -> dict[str, Any]:
        current = run.digests()
        subjects = current if name is None else run.subject_of(name, current)
        if not subjects:
            raise ReviewError(f"run {run.run_id} has no deliverable file to judge")
        return decision_payload(
            run_id=run.run_id,
            seq=seq,
            previous=previous,
            reviewer=reviewer,
            keyid=key.keyid,
            decision=decision,
            note=note,
            artifact=name,
            subjects=subjects,
        )

    return _record(store, run, key, payload, home)


def record_mark(
    store: RunStore,
    run_id: str,
    *,
    reviewer: str,
    mark: str,
    note: str,
    artifact: str,
    location: str,
    row_id: str,
    quote: str | None = None,
    correction: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> RecordedReview:
    """Sign and record `reviewer`'s `mark` on the citation of `row_id` at `location` of the
    deliverable `artifact` (a claim of the run, as `runlens drift` names claims: `line N` of
    a Markdown file, `items[3]` of a JSON one), with `note` and a correction the plugin
    declares. The quote defaults to the citation's."""
    if mark not in MARKS:
        raise ReviewError(f"mark {mark!r}: use one of {', '.join(MARKS)}")
    run = _Run.open(store, run_id, home)
    key = _reviewer_key(store, reviewer, home)
    name = run.artifact_name(artifact)
    cited = run.claim(name, location, row_id)
    fixed = run.check_correction(name, correction)

    def payload(seq: int, previous: str | None) -> dict[str, Any]:
        return mark_payload(
            run_id=run.run_id,
            seq=seq,
            previous=previous,
            reviewer=reviewer,
            keyid=key.keyid,
            mark=mark,
            note=note,
            artifact=name,
            location=claim_location(location),
            row_id=row_id,
            quote=quote if quote is not None else cited,
            correction=fixed,
            subjects=run.subject_of(name, run.digests()),
        )

    return _record(store, run, key, payload, home)


def _record(
    store: RunStore,
    run: _Run,
    key: SigningKey,
    payload: Callable[[int, str | None], dict[str, Any]],
    home: Path | None,
) -> RecordedReview:
    """Sign `payload(seq, previous)` on top of the run's lines in the store and append it
    (again on top of another reviewer's line that took its place), then bring the ledger
    file, the verdict and the review state in step."""
    run.adopt_workspace_lines()
    for _ in range(_ATTEMPTS):
        entries = _stored_entries(store, run.run_id)
        seq, previous = next_link(entries)
        entry = sign_entry(payload(seq, previous), key)
        if store.append_review_line(run.run_id, entry):
            break
    else:
        raise ReviewError(
            f"run {run.run_id}: other reviews kept taking this review's place in the ledger "
            f"({_ATTEMPTS} tries): try again"
        )
    with run.writing():
        entries = _stored_entries(store, run.run_id)
        run.write_ledger(entries)
        summary = run.summary(entries)
        resigned, warning = run.resign(entries, summary.state, home)
        store.set_review_state(run.run_id, summary.state)
    return RecordedReview(entry, summary, resigned, warning)


# -- reading ----------------------------------------------------------------------------------


def run_reviews(
    store: RunStore, run_id: str, home: Path | None = None
) -> tuple[list[ReviewEntry], ReviewSummary]:
    """The run's reviews (its ledger, in order) and what they add up to with its files as
    they are now; the store's review state follows (a file changed since voids decisions)."""
    run = _Run.open(store, run_id, home, judged=False)
    run.adopt_workspace_lines()
    entries = _stored_entries(store, run.run_id)
    summary = run.summary(entries)
    if summary.state != run.detail.review_state:
        store.set_review_state(run.run_id, summary.state)
    return entries, summary


def marks_table(
    store: RunStore, run_ids: Sequence[str], home: Path | None = None
) -> list[dict[str, Any]]:
    """Every current mark of the runs (a reviewer's latest on each claim, on the files as
    they are), one row per claim and reviewer: `MARK_COLUMNS`."""
    rows: list[dict[str, Any]] = []
    for run_id in run_ids:
        _, summary = run_reviews(store, run_id, home)
        for entry in summary.marks:
            rows.append(
                {
                    "run_id": entry.run_id,
                    "artifact": entry.artifact,
                    "location": entry.location,
                    "row_id": entry.row_id,
                    "quote": entry.quote,
                    "reviewer": entry.reviewer,
                    "mark": entry.mark,
                    "note": entry.note,
                    "correction": dict(entry.correction) if entry.correction else None,
                    "created_at": entry.created_at,
                    "digest": entry.digest,
                }
            )
    return rows


def reviews_document(
    run_id: str,
    entries: Sequence[ReviewEntry],
    summary: ReviewSummary,
    reruns: Sequence[str],
    rerun_of: str | None,
) -> dict[str, Any]:
    """A run's reviews as `runlens reviews --json` and `GET /api/runs/{id}/reviews` give
    them: `{run_id, review_state, review, entries, reruns, rerun_of}`, each entry's payload
    with its `digest`, `valid` (it counts now: bound to the files as they are, the latest of
    its reviewer on its target) and `void` (a decision whose files changed since)."""
    valid = {e.digest for e in summary.decisions} | {e.digest for e in summary.marks}
    void = {e.digest for e in summary.void}
    return {
        "run_id": run_id,
        "review_state": summary.state,
        "review": summary.as_json(),
        "entries": [
            {**entry.as_json(), "valid": entry.digest in valid, "void": entry.digest in void}
            for entry in entries
        ],
        "reruns": list(reruns),
        "rerun_of": rerun_of,
    }


def _stored_entries(store: RunStore, run_id: str) -> list[ReviewEntry]:
    lines = store.review_lines(run_id)
    if not lines:
        return []
    return parse_ledger(
        "".join(line + "\n" for line in lines), source=f"the run store's reviews of {run_id}"
    )


def _reviewer_key(store: RunStore, reviewer: str, home: Path | None) -> SigningKey:
    """The reviewer's signing key: the store must know them, this home hold their key, and
    the two agree."""
    from runlens.review.entries import check_reviewer_name
    from runlens.review.reviewers import reviewer_key

    check_reviewer_name(reviewer)
    row = store.get_reviewer(reviewer)
    if row is None:
        raise UserError(
            f"no reviewer {reviewer!r} in the run store {store.url} "
            f"(add one: runlens reviewers add {reviewer})"
        )
    key = reviewer_key(reviewer, home)
    if key.keyid != row.keyid:
        raise UserError(
            f"reviewer {reviewer}: the key in this home (key id {key.keyid[:16]}…) is not the "
            f"one the run store knows (key id {row.keyid[:16]}…)"
        )
    return key


# -- the run reviewed -------------------------------------------------------------------------


class _Run:
    """The run a review is about: its row, its files (its workspace here, else the store's)
    and its plugin's declarations."""

    def __init__(
        self, store: RunStore, detail: RunDetail, workspace: Path | None, plugin: Plugin | None
    ) -> None:
        self.store = store
        self.detail = detail
        self.run_id = detail.run_id
        self.workspace = workspace
        self.plugin = plugin

    @classmethod
    def open(cls, store: RunStore, run_id: str, home: Path | None, *, judged: bool = True) -> _Run:
        from runlens.store.sync import local_workspace

        detail = store.get_run(run_id)
        if detail is None:
            raise UserError(f"no run {run_id!r} (looked in the run store {store.url})")
        if judged and not _was_judged(detail):
            raise ReviewError(
                f"run {run_id} has not been judged yet (status {detail.status}): a run is "
                "reviewed once it has ended with a verdict"
            )
        return cls(store, detail, local_workspace(store, detail), _plugin(detail.plugin))

    @property
    def policy(self) -> ReviewPolicy:
        from runlens.plugins.review import ReviewPolicy

        policy = getattr(self.plugin, "review_policy", None)
        return policy if isinstance(policy, ReviewPolicy) else ReviewPolicy()

    # -- files --

    def digests(self) -> dict[str, str]:
        """SHA-256 of every deliverable file now (`runlens.review.ledger.current_digests`;
        of the store's files of the run when its workspace is not here)."""
        if self.workspace is not None:
            return current_digests(self.workspace)
        index = self.store.file_index(self.run_id)
        return {
            path: digest
            for path, (digest, _) in sorted(index.items())
            if path.startswith(ARTIFACTS_PREFIX)
        }

    def subject_of(self, name: str, current: Mapping[str, str]) -> dict[str, str]:
        subject = artifact_subject(name)
        digest = current.get(subject)
        if digest is None:
            raise ReviewError(f"run {self.run_id}: {subject} is not on disk: nothing to judge")
        return {subject: digest}

    def summary(self, entries: Sequence[ReviewEntry]) -> ReviewSummary:
        """What `entries` add up to on the run's files as they are now, under its policy."""
        return review_state(
            entries,
            self.digests(),
            self.policy,
            self.detail.submitted_by,
            completed=self.detail.status == "completed",
        )

    def artifact_name(self, given: str) -> str:
        """The deliverable's contract name (as the manifest lists it) that `given` names:
        that name, its path under `artifacts/` or its file name."""
        names = [artifact.name for artifact in self.detail.artifacts]
        for name in names:
            if given in (name, artifact_subject(name)) or artifact_subject(given) == name:
                return name
        matches = [name for name in names if name.rsplit("/", 1)[-1] == given]
        if len(matches) == 1:
            return matches[0]
        listed = ", ".join(names) or "none"
        raise ReviewError(
            f"run {self.run_id} has no deliverable {given!r} (its deliverables: {listed})"
        )

    def claim(self, artifact: str, location: str, row_id: str) -> str | None:
        """The quote of the citation of `row_id` at `location` of `artifact` (None when it
        quotes nothing); `ReviewError` when the run makes no such claim."""
        citations = self.store.citations(self.run_id, artifact=artifact)
        for citation in citations:
            if citation.row_id != row_id:
                continue
            if claim_location(citation.location) == claim_location(location):
                return citation.quote
        places = sorted({claim_location(c.location) for c in citations if c.row_id == row_id})
        where = f" (it cites row {row_id} at {', '.join(places[:10])})" if places else ""
        raise ReviewError(
            f"run {self.run_id}: {artifact} makes no claim citing row {row_id!r} at "
            f"{location!r}{where}"
        )

    def check_correction(
        self, artifact: str, correction: Mapping[str, str] | None
    ) -> dict[str, str] | None:
        """`correction` when the plugin declares each of its names for `artifact` (and the
        value is one of the declared choices, where the plugin lists them)."""
        if not correction:
            return None
        declared = {c.name: c for c in getattr(self.plugin, "corrections", ()) or ()}
        for name, value in correction.items():
            found = declared.get(name)
            applies = found is not None and (not found.artifacts or artifact in found.artifacts)
            if found is None or not applies:
                offered = [
                    c.name for c in declared.values() if not c.artifacts or artifact in c.artifacts
                ]
                raise ReviewError(
                    f"correction {name!r}: the {self.detail.plugin} plugin declares "
                    f"{', '.join(offered) or 'no correction'} for {artifact}"
                )
            if found.choices is not None and self.workspace is not None:
                choices = list(found.choices(self.workspace))
                if choices and value not in choices:
                    shown = ", ".join(choices[:20])
                    raise ReviewError(
                        f"correction {name} = {value!r} is not one of the choices ({shown})"
                    )
        return dict(correction)

    # -- the ledger, the verdict --

    def adopt_workspace_lines(self) -> None:
        """Lines the workspace's ledger holds after the store's (appended where the store
        was not reachable) join the store (`runlens.store.sync.adopt_reviews`)."""
        if self.workspace is not None:
            from runlens.store.sync import adopt_reviews

            adopt_reviews(self.store, self.run_id, self.workspace)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """One writer of the run's ledger file and verdict at a time (threads, processes)."""
        with _WRITING:
            if self.workspace is None:
                yield
                return
            runtime = self.workspace / "runtime"
            handle = os.open(runtime, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX)
                yield
            finally:
                os.close(handle)  # closing releases the lock

    def write_ledger(self, entries: Sequence[ReviewEntry]) -> None:
        """`runtime/reviews.jsonl` as the store's lines: in the workspace here, and in the
        store's files of a run whose files it keeps (a worker's run)."""
        data = ledger_text(entries).encode("utf-8")
        if self.workspace is not None:
            from runlens.atomic import write_atomic

            write_atomic(self.workspace / REVIEWS_PATH, data)
        if self.workspace is None or self.store.file_index(self.run_id):
            self.store.put_files(self.run_id, {REVIEWS_PATH: data})

    def resign(
        self, entries: Sequence[ReviewEntry], state: str, home: Path | None
    ) -> tuple[bool, str | None]:
        """Re-sign the run's verdict with its reviews; (done, why not)."""
        if self.workspace is None:
            return False, (
                f"the verdict of run {self.run_id} was not re-signed: its workspace is not "
                "on this machine (the reviews are in the run store)"
            )
        from runlens.verdict.dsse import VerdictError
        from runlens.verdict.keys import SigningKeyError, load_public_keys, signing_key
        from runlens.verdict.statement import VERDICT_PATH, resign_with_reviews

        reviewers: dict[str, str] = {}
        for name in sorted({entry.reviewer for entry in entries}):
            row = self.store.get_reviewer(name)
            if row is not None:
                reviewers[name] = row.public_key
        try:
            key = signing_key(home)
            trusted = {**load_public_keys([], home), key.keyid: key.public_key}
        except SigningKeyError as error:
            return False, f"the verdict was not re-signed: {error}"
        try:
            done = resign_with_reviews(self.workspace, entries, reviewers, state, key, trusted)
        except VerdictError as error:
            return False, f"the verdict was not re-signed: {error.reason}"
        if not done:
            return False, (
                f"the verdict of run {self.run_id} was not re-signed: its signature does not "
                "hold with this home's keys (runlens verify says why)"
            )
        if self.store.file_index(self.run_id):  # other machines read the run from the store
            verdict = (self.workspace / VERDICT_PATH).read_bytes()
            self.store.put_files(self.run_id, {VERDICT_PATH: verdict})
        return True, None


def _was_judged(detail: RunDetail) -> bool:
    """Whether the run ended after its validators judged it (it signed a verdict then)."""
    if not is_terminal(detail.status):
        return False
    if detail.status == "completed":
        return True
    return any(artifact.status in _JUDGED_ARTIFACT for artifact in detail.artifacts)


def _refuse_approving_what_failed(detail: RunDetail, artifact: str | None) -> None:
    """A person's approval stands on the validators' pass, never in place of it: a run that
    did not complete, or a deliverable they rejected, can have changes requested or be
    rejected, not be approved (`ReviewRefused`)."""
    if artifact is None and detail.status != "completed":
        raise ReviewRefused(
            f"run {detail.run_id} is {detail.status}: only a completed run can be approved "
            "(request changes or reject it, or approve one of its deliverables that passed)"
        )
    rejected = next(
        (row for row in detail.artifacts if row.name == artifact and row.status == "rejected"),
        None,
    )
    if rejected is not None:
        raise ReviewRefused(
            f"run {detail.run_id}: the validators rejected {rejected.name}, so it cannot be "
            "approved (request changes or reject it)"
        )


def _plugin(name: str) -> Plugin | None:
    """The run's plugin, None when it is not installed here (the default policy holds)."""
    from runlens.plugins import load_plugin

    try:
        return load_plugin(name)
    except Exception:  # a plugin that cannot load here: its declarations are unknown
        return None


def marks_text(rows: list[dict[str, Any]], kind: str) -> str:
    """The marks export: CSV with a header (a correction as JSON text) or JSON lines."""
    if kind == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(MARK_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        flat = dict(row)
        correction = flat.get("correction")
        flat["correction"] = json.dumps(correction, ensure_ascii=False) if correction else ""
        writer.writerow({key: _csv_cell(flat.get(key)) for key in MARK_COLUMNS})
    return buffer.getvalue()


def _csv_cell(value: Any) -> str:
    """A CSV cell; text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) is quoted
    with a leading apostrophe, as OWASP advises for CSV exports."""
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text
