"""The preservation guard and `memdir diff --facts` give one verdict on every rewrite.

Both read fact identity from `memdir.conventions` (docs/conventions.md, "Fact lines"). Here
hypothesis generates a store file of fact lines and a rewrite of it: bolding, other list or
heading markers, blockquotes, reordered or regrouped locators, case changes, added whitespace,
lines moved within the file or to another file, and facts dropped, reworded or given another
locator. The rewrite is applied twice from the same store: through the real tool harness over
a guarded store in a reorganization step (the guard's verdict: refused or not), and by plain
file writes to a copy, compared with the original by `diff_facts` (the diff's verdict). The two
must agree, and must match what the rewrite did by construction: it loses a fact exactly when
some original (locator set, words) is carried by no line of the result.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.analytics.integrity import diff_facts
from memdir.store.store import Store
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

WORDS = ["alice", "bob", "adopted", "beagle", "nurse", "paris", "oak", "table", "moved", "max"]
LOCS = ["S1T2", "S6T5", "S10T1", "B3M12", "E4"]
STYLES = ["keep", "bold", "marker", "heading", "quote", "reorder", "regroup", "case", "space"]
LOSSY = ["drop", "reword", "relocate"]
F_PATH, G_PATH = "/memories/notes/a.md", "/memories/notes/b.md"
F_HEAD, G_HEAD = "# Notes\nloose note without a source\n", "# Other\n"


def fm(name: str) -> str:
    return f"---\nname: {name}\ndescription: notes {name}\n---\n"


@dataclass(frozen=True)
class Fact:
    """What a fact line says, by construction: its words (lower case, single spaces) and
    locators. Two lines say the same fact when these agree, however they are written."""

    body: str
    locs: tuple[str, ...]

    @property
    def meaning(self) -> tuple[frozenset[str], str]:
        return frozenset(self.locs), self.body


def render(fact: Fact, style: str) -> str:
    """One way of writing `fact` on a line; every style keeps what it says."""
    group = f"[{', '.join(fact.locs)}]"
    if style == "bold":
        return f"- **{fact.body}** {group}"
    if style == "marker":
        return f"* {fact.body} {group}" if len(fact.locs) % 2 else f"3. {fact.body} {group}"
    if style == "heading":
        return f"## {fact.body} {group}"
    if style == "quote":
        return f"> - {fact.body} {group}"
    if style == "reorder":
        return f"- {fact.body} [{', '.join(reversed(fact.locs))}]"
    if style == "regroup":
        return f"- {fact.body} " + " ".join(f"[{loc}]" for loc in fact.locs)
    if style == "case":
        return f"- {fact.body.upper()} {group}"
    if style == "space":
        return "  -   " + fact.body.replace(" ", " \t ") + f"   [{',  '.join(fact.locs)}]  "
    return f"- {fact.body} {group}"


bodies = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=4).map(" ".join),
    st.tuples(st.sampled_from(WORDS), st.sampled_from(WORDS)).map(
        lambda t: f"{t[0]} | {t[1]}: vegan (since 2023-05-02)"
    ),
)
facts = st.builds(
    Fact, bodies, st.lists(st.sampled_from(LOCS), min_size=1, max_size=3, unique=True).map(tuple)
)


@dataclass
class Case:
    f_facts: list[Fact]  # the file being rewritten
    g_facts: list[Fact]  # another file of the store (may repeat some of them)
    ops: list[str]  # per fact of F: a style, "move" (to G, first) or a lossy change
    order: list[int]  # the new order of F's remaining lines
    drop_loose: bool


@st.composite
def cases(draw: st.DrawFn) -> Case:
    f_facts = draw(st.lists(facts, min_size=1, max_size=6))
    copies = draw(st.lists(st.sampled_from(f_facts), max_size=2))
    g_facts = draw(st.lists(facts, max_size=2)) + copies
    ops = draw(
        st.lists(st.sampled_from([*STYLES, "move", *LOSSY]), min_size=len(f_facts), max_size=len(f_facts))
    )
    order = draw(st.permutations(range(len(f_facts))))
    return Case(f_facts, g_facts, ops, list(order), draw(st.booleans()))


def changed(fact: Fact, op: str) -> Fact:
    if op == "reword":
        first, _, rest = fact.body.partition(" ")
        return Fact(("moved" if first != "moved" else "oak") + " " + rest, fact.locs)
    if op == "relocate":
        return Fact(fact.body, (*fact.locs, "S99T9"))
    return fact


def rewrite(case: Case) -> tuple[str, str, list[Fact]]:
    """(G's new body, F's new body, every fact the two files carry afterwards)."""
    moved = [f for f, op in zip(case.f_facts, case.ops, strict=True) if op == "move"]
    g_body = G_HEAD + "".join(render(f, "keep") + "\n" for f in case.g_facts + moved)
    f_lines, kept = [], []
    for i in case.order:
        fact, op = case.f_facts[i], case.ops[i]
        if op in ("move", "drop"):
            continue
        new = changed(fact, op)
        f_lines.append(render(new, op if op in STYLES else "keep"))
        kept.append(new)
    head = "# Notes\n" if case.drop_loose else F_HEAD
    return g_body, head + "".join(line + "\n" for line in f_lines), kept + case.g_facts + moved


def make_store(root: Path, case: Case) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "MEMORY.md").write_text("---\ndescription: root\n---\n# Memory\n")
    f_body = F_HEAD + "".join(render(f, "keep") + "\n" for f in case.f_facts)
    g_body = G_HEAD + "".join(render(f, "keep") + "\n" for f in case.g_facts)
    (root / "notes" / "a.md").write_text(fm("a") + f_body)
    (root / "notes" / "b.md").write_text(fm("b") + g_body)


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_guard_and_diff_agree_on_every_rewrite(case: Case) -> None:
    g_body, f_body, after = rewrite(case)
    lost = {f.meaning for f in case.f_facts + case.g_facts} - {f.meaning for f in after}
    with tempfile.TemporaryDirectory() as tmp:
        live, old, plain = Path(tmp, "live"), Path(tmp, "old"), Path(tmp, "plain")
        make_store(live, case)
        shutil.copytree(live, old)
        shutil.copytree(live, plain)
        # The diff's verdict: the rewrite written straight to a copy, compared with the original.
        (plain / "notes" / "b.md").write_text(fm("b") + g_body)
        (plain / "notes" / "a.md").write_text(fm("a") + f_body)
        diff_ok = diff_facts(Store(old), Store(plain)).ok
        # The guard's verdict: the same rewrite as a reorganizer's tool calls, copies first.
        store = open_store(live, index=False, journal=False, guards=Guards(preserve_facts=True))
        harness = Harness(store, "manage", role="reorganizer", reorganize=True)
        old_g = (old / "notes" / "b.md").read_text().removeprefix(fm("b"))
        old_f = (old / "notes" / "a.md").read_text().removeprefix(fm("a"))
        results = [
            harness.call("str_replace", {"path": G_PATH, "old_str": old_g, "new_str": g_body}),
            harness.call("str_replace", {"path": F_PATH, "old_str": old_f, "new_str": f_body}),
        ]
        errors = [r.text for r in results if r.is_error]
        assert all("refused: this is a reorganization" in e for e in errors), errors
        guard_ok = not errors
        assert guard_ok == diff_ok == (not lost), (lost, errors)
        if guard_ok:  # the harness wrote exactly the rewrite the diff judged
            assert files(live) == files(plain)
        else:  # a refused write leaves its file as it was; only the copy step (never lossy) landed
            assert (live / "notes" / "a.md").read_bytes() == (old / "notes" / "a.md").read_bytes()


def test_a_dropped_fact_is_caught_by_both(tmp_path: Path) -> None:
    """One example spelled out: bold, reorder and re-case what stays, drop one fact."""
    case = Case(
        [Fact("alice adopted beagle", ("S6T5", "S1T2")), Fact("bob moved paris", ("B3M12",))],
        [],
        ["drop", "case"],
        [1, 0],
        drop_loose=True,
    )
    _, f_body, _ = rewrite(case)
    assert "ALICE" not in f_body and "BOB MOVED PARIS [B3M12]" in f_body
    live, old = tmp_path / "live", tmp_path / "old"
    make_store(live, case)
    shutil.copytree(live, old)
    store = open_store(live, index=False, journal=False, guards=Guards(preserve_facts=True))
    r = Harness(store, "manage", reorganize=True).call(
        "str_replace",
        {
            "path": F_PATH,
            "old_str": (old / "notes" / "a.md").read_text().removeprefix(fm("a")),
            "new_str": f_body,
        },
    )
    assert r.is_error and "alice adopted beagle [S6T5, S1T2]" in r.text
    (live / "notes" / "a.md").write_text(fm("a") + f_body)  # the same rewrite, unguarded
    d = diff_facts(Store(old), Store(live))
    assert not d.ok and [f.text for f in d.missing] == ["- alice adopted beagle [S6T5, S1T2]"]
