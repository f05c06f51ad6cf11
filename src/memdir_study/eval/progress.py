"""Progress bars for a run of the conversational study: one per cell build (units of work) and
one per cell search (questions answered). Kept apart from the runner, which only ticks them."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress

K = TypeVar("K", bound=Hashable)


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


def keyed_bars(
    describe: Callable[[K], str], *, disable: bool
) -> tuple[Progress, Callable[[K, int, int], None]]:
    """A progress display on stderr and its `tick(key, done, total)`, which gives each key (a
    bench's conversation, a month) a bar, described by `describe`, on its first report."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), disable=disable,
    )  # fmt: skip
    tasks: dict[K, TaskID] = {}

    def tick(key: K, done: int, total: int) -> None:
        if key not in tasks:
            tasks[key] = bar.add_task(describe(key), total=total)
        bar.update(tasks[key], completed=done)

    return bar, tick
