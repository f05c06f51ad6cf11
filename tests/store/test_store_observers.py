"""The hooks a Store calls on each observer, all declared in `StoreObserver`: `before_step`
before the tool writes, `on_step` with the changes, `after_step` once the step is over; an
observer that keeps only `on_step` inherits the other two as no-ops."""

from __future__ import annotations

from pathlib import Path

from memdir.store.store import Step, Store, StoreObserver


class Trace(StoreObserver):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bool]] = []

    def _note(self, hook: str, store: Store, step: Step) -> None:
        self.calls.append((hook, step.tool, store.exists("/memories/a.md")))

    def before_step(self, store: Store, step: Step) -> None:
        self._note("before", store, step)

    def on_step(self, store: Store, step: Step) -> None:
        self._note("on", store, step)

    def after_step(self, store: Store, step: Step) -> None:
        self._note("after", store, step)


class ChangesOnly(StoreObserver):
    def __init__(self) -> None:
        self.paths: list[str] = []

    def on_step(self, store: Store, step: Step) -> None:
        self.paths += [c.path for c in step.changes]


def test_every_observer_gets_the_three_hooks_in_order(tmp_path: Path) -> None:
    trace, changes = Trace(), ChangesOnly()
    store = Store(tmp_path, observers=[lambda s: trace, lambda s: changes])
    with store.step("create"):
        store.create("/memories/a.md", "alpha\n")
    with store.step("view"):  # a step that changes nothing: no on_step, still before and after
        pass
    assert trace.calls == [
        ("before", "create", False),  # the store as it was: the tool had not written yet
        ("on", "create", True),
        ("after", "create", True),
        ("before", "view", True),
        ("after", "view", True),
    ]
    assert changes.paths == ["/memories/a.md"]
    assert not any(o.keeps_description_cache for o in store.observers)
