"""Live progress of a run for a person at a terminal: plan steps, the tool being called.

It knows the core's events only (`runlens.records.catalogue`). A plugin's own events
(`plugin.event`) are shown generically: by name, with their scalar fields, and counted.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from runlens.cli.common import terminal_safe
from runlens.plugins.base import PlanStep
from runlens.records.events import Event

#: Shown for a step whose work is done while a later step runs: validation is still to come.
DELIVERED = "delivered"
_ICONS = {
    "pending": ("○", "dim"),
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
    DELIVERED: ("◔", "cyan"),
}


class RunProgress:
    """An event subscriber that redraws a small live view; plain lines when not a terminal."""

    def __init__(self, console: Console, steps: tuple[PlanStep, ...]) -> None:
        self.console = console
        self.steps = steps
        self.status = {step.step_id: "pending" for step in steps}
        self.activity = "starting"
        self.tool_calls = 0
        self.turns = 0
        self.batches_done = 0
        self.batches_failed = 0
        self.batches_total = 0
        #: A plugin's own events seen so far, by name.
        self.plugin_events: Counter[str] = Counter()
        self._live: Live | None = None

    def __enter__(self) -> RunProgress:
        if self.console.is_terminal:
            self._live = Live(
                self._render(), console=self.console, refresh_per_second=8, transient=True
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.type == "plan.step.updated":
            if data["status"] == "running":
                self._hand_over(data["step_id"])
            self.status[data["step_id"]] = data["status"]
            if self._live is None:
                reason = f" ({data['reason']})" if data.get("reason") else ""
                self.console.print(
                    terminal_safe(f"  {data['step_id']}: {data['status']}{reason}"),
                    highlight=False,
                    markup=False,
                )
        elif event.type == "tool.called":
            self.tool_calls += 1
            self.activity = f"calling {data.get('name')}"
        elif event.type == "model.called":
            self.turns += 1 if data.get("purpose", "turn") == "turn" else 0
            self.activity = "waiting for the model"
        elif event.type in ("batch.completed", "batch.failed"):
            failed = event.type == "batch.failed"
            self.batches_done += 1
            self.batches_failed += failed
            self.batches_total = data.get("batches") or self.batches_total
            done = "FAILED" if failed else "analysed"
            self.activity = f"{done} batch {data.get('batch')} of {data.get('batches')}"
            # A log or CI gets one line per batch, so progress is visible; a terminal gets
            # the failures (printed above the live view, so they stay on screen).
            if self._live is None or failed:
                line = f"  batch {data.get('batch')}/{data.get('batches')}: {data.get('items')} "
                line += f"of {data.get('rows')} rows analysed"
                if failed:
                    line += f"; failed: {data.get('reason')}"
                style = "yellow" if failed else None
                self.console.print(terminal_safe(line), highlight=False, markup=False, style=style)
        elif event.type == "run.validating":
            self.activity = "validating deliverables"
            self._hand_over(None)
            if self._live is None:
                self.console.print(
                    f"  validating the deliverables (round {data.get('round')})", highlight=False
                )
        elif event.type == "repair.requested":
            self.activity = f"repair round {data.get('round')}: model fixing findings"
        elif event.type == "plugin.event":
            self._plugin_event(str(data.get("name")), data.get("data"))
        if self._live is not None:
            self._live.update(self._render())

    def _plugin_event(self, name: str, fields: Any) -> None:
        self.plugin_events[name] += 1
        shown = ""
        if isinstance(fields, dict):
            shown = ", ".join(
                f"{key}={value}"
                for key, value in fields.items()
                if not isinstance(value, (dict, list))
            )
        self.activity = f"{name}: {shown}" if shown else name
        if self._live is None:  # a log gets one line per event, as for batches
            self.console.print(terminal_safe(f"  {self.activity}"), highlight=False, markup=False)

    def _hand_over(self, step_id: str | None) -> None:
        """A later step starts: the steps before it that are still under way have delivered
        their part. They are not `completed` (that takes validation); shown as delivered.
        `None`: validation starts, every step under way has delivered."""
        for step in self.steps:
            if step.step_id == step_id:
                return
            if self.status.get(step.step_id) == "running":
                self.status[step.step_id] = DELIVERED
                if self._live is None:
                    self.console.print(
                        f"  {step.step_id}: delivered, awaiting validation",
                        highlight=False,
                        markup=False,
                    )

    def _render(self) -> Group:
        table = Table.grid(padding=(0, 1))
        for step in self.steps:
            status = self.status[step.step_id]
            if status == "running":
                icon: Any = Spinner("dots", style="cyan")
            else:
                symbol, style = _ICONS[status]
                icon = Text(symbol, style=style)
            title = terminal_safe(step.title)
            table.add_row(icon, Text(title, style="bold" if status == "running" else ""))
        batches = ""
        if self.batches_total:
            batches = f" · batches {self.batches_done}/{self.batches_total}"
            batches += f" ({self.batches_failed} failed)" if self.batches_failed else ""
        events = "".join(f" · {name} {count}" for name, count in self.plugin_events.items())
        footer = Text(
            terminal_safe(
                f"{self.activity} · turns {self.turns} · tool calls {self.tool_calls}"
                f"{batches}{events}"
            ),
            style="dim",
        )
        return Group(table, footer)
