"""Run metrics, folded from the event stream (never counted separately).

The same fold serves a live run (a subscriber of its `EventLog`) and a dead one (the events
read back from `events.jsonl` by `runtime.recovery`), so both count alike. A plugin's own
events (`plugin.event`) are counted per name in `plugin_events`; nothing here knows them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from runlens.records.base import Record
from runlens.records.events import Event


class RunMetrics(Record):
    """`metrics` of `runtime/run.json` (SPEC section 11)."""

    turns: int
    model_calls: int
    model_retries: int
    model_failures: int
    tool_calls: int
    tool_failures: int
    tool_calls_by_name: dict[str, int]
    input_tokens: int | None
    """None when the provider reported no token counts."""
    output_tokens: int | None
    validation_rounds: int
    repair_rounds: int
    hooks_blocked: int
    findings_by_code: dict[str, int]
    batches_completed: int
    batches_failed: int
    plugin_events: dict[str, int]
    """Events of the plugin's own (`plugin.event`), by name."""
    phase_seconds: dict[str, float]
    """Wall time per phase (`running`, `validating`), summed over repair rounds."""


class MetricsCollector:
    """Subscribes to a run's events and keeps its figures up to date."""

    def __init__(self) -> None:
        self.turns = 0
        self.model_calls = 0
        self.model_retries = 0
        self.model_failures = 0
        self.tool_calls = 0
        self.tool_failures = 0
        self.tool_calls_by_name: Counter[str] = Counter()
        self.input_tokens = 0
        self.output_tokens = 0
        self.tokens_reported = False
        self.validation_rounds = 0
        self.repair_rounds = 0
        self.hooks_blocked = 0
        self.findings_by_code: Counter[str] = Counter()
        self.batches_completed = 0
        self.batches_failed = 0
        self.plugin_events: Counter[str] = Counter()
        self._phase_started: dict[str, float] = {}
        self.phase_seconds: defaultdict[str, float] = defaultdict(float)
        self._current_phase: str | None = None

    def __call__(self, event: Event) -> None:
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event)

    def _enter_phase(self, phase: str | None, at: float) -> None:
        if self._current_phase is not None:
            started = self._phase_started.pop(self._current_phase, at)
            self.phase_seconds[self._current_phase] += at - started
        self._current_phase = phase
        if phase is not None:
            self._phase_started[phase] = at

    def _model_called(self, event: Event) -> None:
        data = event.data
        self.model_calls += 1
        if data.get("purpose", "turn") == "turn":
            self.turns += 1
        for key, attribute in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
        ):
            value = data.get(key)
            if isinstance(value, int):
                setattr(self, attribute, getattr(self, attribute) + value)
                self.tokens_reported = True

    def _tool_finished(self, event: Event) -> None:
        self.tool_calls += 1
        self.tool_calls_by_name[str(event.data.get("name"))] += 1
        if event.type == "tool.failed":
            self.tool_failures += 1

    def _validator_completed(self, event: Event) -> None:
        for code in event.data.get("finding_codes", ()):
            self.findings_by_code[code] += 1

    def _hook_blocked(self, event: Event) -> None:
        self.hooks_blocked += int(event.data.get("hooks_blocked", 1))

    def _plugin_event(self, event: Event) -> None:
        self.plugin_events[str(event.data.get("name"))] += 1

    def _count(self, attribute: str) -> None:
        setattr(self, attribute, getattr(self, attribute) + 1)

    def snapshot(self) -> RunMetrics:
        return RunMetrics(**self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        """The figures as `run.json` holds them (the fields of `RunMetrics`)."""
        return {
            "turns": self.turns,
            "model_calls": self.model_calls,
            "model_retries": self.model_retries,
            "model_failures": self.model_failures,
            "tool_calls": self.tool_calls,
            "tool_failures": self.tool_failures,
            "tool_calls_by_name": dict(self.tool_calls_by_name),
            "input_tokens": self.input_tokens if self.tokens_reported else None,
            "output_tokens": self.output_tokens if self.tokens_reported else None,
            "validation_rounds": self.validation_rounds,
            "repair_rounds": self.repair_rounds,
            "hooks_blocked": self.hooks_blocked,
            "findings_by_code": dict(self.findings_by_code),
            "batches_completed": self.batches_completed,
            "batches_failed": self.batches_failed,
            "plugin_events": dict(self.plugin_events),
            "phase_seconds": {k: round(v, 6) for k, v in self.phase_seconds.items()},
        }


_PHASES = {
    "run.started": "running",
    "run.validating": "validating",
    "repair.requested": "running",
    "run.completed": None,
    "run.failed": None,
    "run.cancelled": None,
}


def _phase_handler(phase: str | None) -> Callable[[MetricsCollector, Event], None]:
    def handle(collector: MetricsCollector, event: Event) -> None:
        collector._enter_phase(phase, event.at)
        if event.type == "run.validating":
            collector.validation_rounds += 1
        elif event.type == "repair.requested":
            collector.repair_rounds += 1

    return handle


_HANDLERS: dict[str, Callable[[MetricsCollector, Event], None]] = {
    "model.called": MetricsCollector._model_called,
    "model.retried": lambda c, e: c._count("model_retries"),
    "model.failed": lambda c, e: c._count("model_failures"),
    "tool.completed": MetricsCollector._tool_finished,
    "tool.failed": MetricsCollector._tool_finished,
    "validator.completed": MetricsCollector._validator_completed,
    "hook.blocked": MetricsCollector._hook_blocked,
    "batch.completed": lambda c, e: c._count("batches_completed"),
    "batch.failed": lambda c, e: c._count("batches_failed"),
    "plugin.event": MetricsCollector._plugin_event,
    **{name: _phase_handler(phase) for name, phase in _PHASES.items()},
}
