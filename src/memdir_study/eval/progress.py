"""Progress bars for a run of the conversational study: one per cell build (units of work) and
one per cell search (questions answered). Kept apart from the runner, which only ticks them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ProgressBars:
    """Rich progress bars, one per cell (questions answered); a no-op when turned off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bars: Any = None

    def __enter__(self) -> ProgressBars:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bars = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=False,
            )
            self.bars.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bars is not None:
            self.bars.__exit__(None, None, None)

    def units(self, name: str) -> Callable[[int, int], None] | None:
        """A bar that appears with the first report of (done, total)."""
        if self.bars is None:
            return None
        ids: list[Any] = []

        def report(done: int, total: int) -> None:
            if not ids:
                ids.append(self.bars.add_task(name, total=total))
            self.bars.update(ids[0], completed=done, total=total)

        return report

    def task(self, name: str, total: int) -> Callable[[], None]:
        if self.bars is None:
            return lambda: None
        tid = self.bars.add_task(name, total=total)
        return lambda: self.bars.advance(tid)
