"""Progress on the terminal: rollout waves as lines, device batches as a transient
bar (the service floor reports through :class:`~rollouts.runtime.Reporter`)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

err = Console(stderr=True, highlight=False)


class ConsoleReporter:
    """Wave messages as lines, device writes as a transient progress bar."""

    def __init__(self, console: Console = err, enabled: bool = True, *, minimum: int = 1) -> None:
        self.console = console
        self.enabled = enabled
        self.minimum = minimum  # batches smaller than this show no bar
        self._progress: Progress | None = None
        self._task: Any = None

    def message(self, text: str) -> None:
        if self.enabled:
            self.console.print(f"  {text}")

    def begin(self, label: str, total: int) -> None:
        if not self.enabled or not self.console.is_terminal or total < self.minimum:
            return
        self._progress = Progress(
            TextColumn("  {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, count: int = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, count)

    def end(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
