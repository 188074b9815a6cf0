"""What every Stop validator shares: its input, its result and the one-line summary.

A validator reads the workspace, never changes it, and returns a `ValidatorResult`: the
findings (each naming the artifact where the bad value sits) plus one summary line whose
wording starts with the phrase the design article shows (`missing required files: ...`,
`invalid priority: ...`, `missing evidence ids: ...`, `text mismatch: ...`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import stat
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from runlens.contracts import ArtifactContract
from runlens.tools.workspace import INPUT, Workspace
from runlens.validation.findings import Finding, FindingCode
from runlens.validation.trust import UntrustedIndex, open_index

if TYPE_CHECKING:
    from runlens.evidence import EvidenceIndex

EVIDENCE_INDEX = Workspace.EVIDENCE_INDEX

T = TypeVar("T")

#: How many items of one kind a summary lists before it says "and N more".
SUMMARY_ITEMS = 5


@dataclass(frozen=True)
class ValidationContext:
    """What a validator may look at: the workspace, the contracts, the expected index hash.

    `expected_index_sha256` is the hash the run recorded when it wrote the Evidence Index
    (`runtime/run.json` field `evidence_index_sha256`); None skips only that comparison: the
    index is judged against its source either way (`runlens.validation.trust`).

    One context serves one validation round. What several validators ask about the same
    artifact (is it a usable file, what JSON does it hold) is worked out once per round and
    shared: the workspace does not change while validators read it. Shared documents are
    read-only: a validator must not modify one.
    """

    workspace: Path
    contracts: tuple[ArtifactContract, ...]
    expected_index_sha256: str | None = None
    #: Values (provider keys) that must not appear in a deliverable (`secret_in_artifact`).
    secrets: tuple[str, ...] = ()
    #: The source file the index is judged against; None: the one file under `input/`.
    source: Path | None = None
    #: The Evidence Index file to judge; None: `runtime/evidence_index.json`.
    index_file: Path | None = None
    #: True only for the process that built the index from the source and holds the hash
    #: of the bytes it wrote in memory (`expected_index_sha256`): a file with that hash is
    #: then trusted without being rebuilt. Never true for a hash read from the workspace.
    index_built_in_process: bool = False
    _shared: dict[tuple[str, Hashable], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def evidence_index_path(self) -> Path:
        return self.index_file if self.index_file is not None else self.workspace / EVIDENCE_INDEX

    def file_problem(self, artifact_name: str) -> str | None:
        """Why `artifact_name` is not a usable regular file inside the workspace, or None if it
        is; worked out once per round.

        A directory is not a deliverable, and neither is a symlink that leads out of the
        workspace: the model's tools could never have written its target.
        """
        key = ("file", artifact_name)
        if key not in self._shared:
            self._shared[key] = _file_problem(self.workspace, artifact_name, self._resolved)
        problem: str | None = self._shared[key]
        return problem

    def artifact_file(self, artifact_name: str) -> Path | None:
        """The artifact's path when it is a regular file inside the workspace, else None."""
        return None if self.file_problem(artifact_name) else self.workspace / artifact_name

    def parse_json(self, artifact_name: str) -> Any:
        """The artifact's JSON document (see `parse_json`), parsed once per round.

        Raises what `parse_json` raises (the same error on every call), or `FileNotFoundError`
        when the artifact is not a usable file.
        """
        key = ("json", artifact_name)
        if key not in self._shared:
            path = self.artifact_file(artifact_name)
            try:
                if path is None:
                    raise FileNotFoundError(f"{artifact_name} is not a usable file")
                self._shared[key] = (True, parse_json(path))
            except (ValueError, OSError) as error:
                self._shared[key] = (False, error)
        parsed, outcome = self._shared[key]
        if not parsed:
            raise outcome
        return outcome

    def load_document(self, artifact_name: str) -> tuple[bool, Any]:
        """`(True, document)` when the artifact is a readable JSON file, else `(False, None)`.

        For validators that need the parsed document but leave reporting an unreadable one
        to the JSON validator, so one problem gives one finding.
        """
        try:
            return True, self.parse_json(artifact_name)
        except (ValueError, OSError):
            return False, None

    def evidence_index(self) -> EvidenceIndex | UntrustedIndex:
        """The Evidence Index every validator of this round checks against, or why it cannot
        be trusted (see `runlens.validation.trust`), worked out once per round."""
        key = ("index", "")
        if key not in self._shared:
            self._shared[key] = open_index(self)
        index: EvidenceIndex | UntrustedIndex = self._shared[key]
        return index

    def row_texts(self, index: EvidenceIndex) -> dict[str, str]:
        """Every row's text by id, in the index's order, read from `index` (this round's
        `evidence_index()`) once per round: the quote, coverage and figure validators each
        need them all, and reading them is a pass over every row of the index."""
        return self.shared("index", "texts", lambda: dict(index.texts()))

    def judged_bytes(self) -> int:
        """The size of what this round reads: the contracts' artifacts, the Evidence Index and
        its source (the one file under `input/` when `source` is None). A validator's time
        grows with it (`runlens.validation.runner` scales its default limit by it). Worked out
        once per round; a file that cannot be read counts as empty."""
        return self.shared("size", "judged", self._judged_bytes)

    def _judged_bytes(self) -> int:
        paths = [self.workspace / contract.name for contract in self.contracts]
        paths.append(self.evidence_index_path)
        if self.source is not None:
            paths.append(self.source)
        else:
            with contextlib.suppress(OSError):
                paths.extend(self.workspace.joinpath(INPUT).iterdir())
        total = 0
        for path in paths:
            with contextlib.suppress(OSError):
                status = path.stat()
                if stat.S_ISREG(status.st_mode):
                    total += status.st_size
        return total

    def shared(self, kind: str, key: Hashable, compute: Callable[[], T]) -> T:
        """What `compute` returns, worked out once per round under `(kind, key)`: for what
        several validators derive from the same artifacts (the figures a report and a chart
        both state). An exception is not kept: the next caller computes again."""
        slot = (kind, key)
        if slot not in self._shared:
            self._shared[slot] = compute()
        value: T = self._shared[slot]
        return value

    def _resolved(self) -> Path:
        key = ("workspace", "resolved")
        if key not in self._shared:
            self._shared[key] = self.workspace.resolve()
        resolved: Path = self._shared[key]
        return resolved


@dataclass(frozen=True)
class TextSpan:
    """Where something is written in a Markdown deliverable: characters `start` to `end` of
    the file's text as written (decoded as UTF-8, without a BOM; a CR LF counts two), the
    first of them on `line` (1-based)."""

    start: int
    end: int
    line: int


@dataclass(frozen=True, init=False)
class QuoteLocation:
    """Where an accepted evidence quote sits in its source row (character offsets, NFC text)
    and where it is cited: `path` in the artifact (`items[3].evidence_text`, `line 12`), with
    the quote as written and, in a Markdown file, the line and column (1-based) of its
    opening quotation mark, the span of the quotation with its marks (`span`) and the span
    of the id after it (`id_span`), as the citation grammar found them.

    A round of a large run makes one per cited quote (100,000 and more): its `__init__`
    writes the instance's `__dict__` at once, where a frozen dataclass's own sets each field
    through `object.__setattr__` (about three times the cost). Same fields, defaults,
    equality, hash and repr."""

    artifact: str
    path: str
    row_id: str
    start: int
    end: int
    quote: str | None = None
    line: int | None = None
    column: int | None = None
    span: TextSpan | None = None
    id_span: TextSpan | None = None

    def __init__(
        self,
        artifact: str,
        path: str,
        row_id: str,
        start: int,
        end: int,
        quote: str | None = None,
        line: int | None = None,
        column: int | None = None,
        span: TextSpan | None = None,
        id_span: TextSpan | None = None,
    ) -> None:
        fields = self.__dict__
        fields["artifact"] = artifact
        fields["path"] = path
        fields["row_id"] = row_id
        fields["start"] = start
        fields["end"] = end
        fields["quote"] = quote
        fields["line"] = line
        fields["column"] = column
        fields["span"] = span
        fields["id_span"] = id_span


@dataclass(frozen=True)
class CitedSpan:
    """Where a Markdown citation that failed is written (its finding names the line and
    column of the opening mark and the row it cites): the quotation's span with its marks
    and the id's, so a page marks the very characters the grammar read as the citation."""

    artifact: str
    line: int
    column: int
    row_id: str
    span: TextSpan
    id_span: TextSpan | None = None


@dataclass(frozen=True)
class IdCitation:
    """An evidence id a deliverable cites without a quote (a contract's `evidence_fields`,
    such as a backlog item's list of ids), verified to name a row of the index: where it is
    cited (`path`, a concrete JSON path such as `items[1].evidence_ids[0]`) and the row.

    Kept apart from `QuoteLocation` so what counts quotes counts quotes only; the run writes
    both to `runtime/citations.json`, so the UI can link every cited id to its row."""

    artifact: str
    path: str
    row_id: str


@dataclass(frozen=True)
class ValidatorResult:
    """One validator's verdict. It blocks exactly when it has findings.

    `summary` is None when the validator passed, else one line for the run's `error_message`.
    """

    validator: str
    findings: tuple[Finding, ...]
    summary: str | None
    quotes: tuple[QuoteLocation, ...] = ()
    #: The ids it verified that no verified quote of theirs already accounts for.
    id_citations: tuple[IdCitation, ...] = ()
    #: Where the Markdown citations it could not verify are written.
    failed_spans: tuple[CitedSpan, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.findings)


@runtime_checkable
class Validator(Protocol):
    """A Stop validator: reads the workspace described by the context, returns findings."""

    name: str

    def validate(self, context: ValidationContext) -> ValidatorResult: ...


class ContractValidator:
    """A Stop validator built from the contracts it applies to: each subclass says which
    (`applies_to`) and checks them in `validate`; the rest are not its business."""

    name: str = ""

    def __init__(self, contracts: Iterable[ArtifactContract]) -> None:
        self.contracts = tuple(c for c in contracts if self.applies_to(c))

    @staticmethod
    def applies_to(contract: ArtifactContract) -> bool:
        raise NotImplementedError

    def validate(self, context: ValidationContext) -> ValidatorResult:
        raise NotImplementedError


@dataclass(frozen=True)
class Problem:
    """One entry of a summary line: `head: item, item (tail)` once grouped.

    Problems with the same head and tail are listed together, so ten bad priorities read as
    one `invalid priority: ...` entry rather than ten.
    """

    head: str
    item: str
    tail: str = ""


def summarize(problems: Iterable[Problem], limit: int = SUMMARY_ITEMS) -> str:
    """Group problems by (head, tail), keep first-seen order, drop repeats, cap each list."""
    groups: dict[tuple[str, str], dict[str, None]] = {}
    for problem in problems:
        groups.setdefault((problem.head, problem.tail), {})[problem.item] = None
    parts = []
    for (head, tail), items in groups.items():
        shown = list(items)[:limit]
        listing = ", ".join(shown)
        if len(items) > limit:
            listing += f" and {len(items) - limit} more"
        parts.append(f"{head}: {listing}" + (f" {tail}" if tail else ""))
    # One line: an id or value quoted from an artifact may itself contain line breaks.
    return " ".join("; ".join(parts).splitlines())


@dataclass
class Collector:
    """Accumulates one validator's findings, summary problems, quote locations, the
    evidence ids it verified without a quote and where its failed citations are written."""

    validator: str
    findings: list[Finding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    quotes: list[QuoteLocation] = field(default_factory=list)
    id_citations: list[IdCitation] = field(default_factory=list)
    failed_spans: list[CitedSpan] = field(default_factory=list)

    def add(
        self,
        artifact: str,
        code: FindingCode,
        message: str,
        problem: Problem,
        *,
        path: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        """Record one finding and the entry it contributes to the summary line."""
        self.findings.append(
            Finding(
                validator=self.validator,
                artifact=artifact,
                code=code,
                path=path,
                message=message,
                details=details or {},
            )
        )
        self.problems.append(problem)

    def result(self) -> ValidatorResult:
        """The verdict: a summary line exactly when there are findings."""
        summary = None
        if self.findings:
            summary = summarize(self.problems) or f"{self.validator}: {len(self.findings)} findings"
        return ValidatorResult(
            self.validator,
            tuple(self.findings),
            summary,
            tuple(self.quotes),
            tuple(self.id_citations),
            tuple(self.failed_spans),
        )


def report_untrusted(
    collector: Collector, untrusted: UntrustedIndex, citing: Iterable[ArtifactContract]
) -> None:
    """Each citing artifact gets the finding that the index cannot be trusted (none of them
    can be verified, so each is rejected); they share one summary entry, so the error
    message says it once."""
    for contract in citing:
        collector.add(
            contract.name,
            untrusted.code,
            f"{EVIDENCE_INDEX} {untrusted.reason}: the evidence cited in {contract.name} "
            "cannot be traced to the source",
            Problem(untrusted.head, f"{EVIDENCE_INDEX} {untrusted.reason}"),
            details={"index": EVIDENCE_INDEX},
        )


#: The errors `Path.exists` reads as "no such file".
_ABSENT = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _file_problem(
    workspace: Path, artifact_name: str, resolved_workspace: Callable[[], Path]
) -> str | None:
    path = workspace / artifact_name
    try:
        mode = path.stat().st_mode  # one stat answers exists, is_file and is_dir
    except OSError as error:
        if error.errno not in _ABSENT:  # as `Path.exists`: e.g. a permission error propagates
            raise
        return "does not exist" if not path.is_symlink() else "is a broken symlink"
    except ValueError:  # an unrepresentable path (e.g. an embedded NUL), as `Path.exists`
        return "does not exist"
    if not stat.S_ISREG(mode):
        return "is a directory, not a file" if stat.S_ISDIR(mode) else "is not a regular file"
    if not path.resolve().is_relative_to(resolved_workspace()):
        return "is a symlink that leads outside the workspace"
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(path: Path) -> Any:
    """Parse a JSON file strictly: UTF-8 (a BOM is allowed), no NaN or Infinity.

    Raises `ValueError`: `json.JSONDecodeError` (with line and column), `UnicodeDecodeError`,
    or a plain `ValueError` for a non-standard constant.
    """
    return json.loads(path.read_bytes().decode("utf-8-sig"), parse_constant=_reject_constant)


def load_document(workspace: Path, artifact_name: str) -> tuple[bool, Any]:
    """`ValidationContext.load_document` outside a validation round (for a tool that reads a
    deliverable written earlier in the run): nothing is shared, each call reads the file."""
    return ValidationContext(workspace, ()).load_document(artifact_name)


def join_path(location: str, key: str) -> str:
    """Append a key to a concrete location: `items[0]` + `priority` -> `items[0].priority`."""
    return f"{location}.{key}" if location else key


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show_value(value: Any, limit: int = 60) -> str:
    """A value as JSON for messages, shortened: `"high"`, `42`, `null`."""
    return shorten(json.dumps(value, ensure_ascii=False), limit)
