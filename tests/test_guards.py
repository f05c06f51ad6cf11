"""Operator guards: each refuses with a text the model can act on, and a refused write leaves the
store byte-identical."""

from __future__ import annotations

from pathlib import Path

from memdir import Guards, Memory
from memdir.tools.guards import fact_key
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def fm(name: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}"


def snap(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".memdir" not in p.parts
    }


def test_core_budget_on_root_files_only(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m", guards=Guards(core_budget=300))
    assert not mem.call("create", {"path": "/memories/user.md", "file_text": fm("user", "Ada.\n")}).is_error
    before = snap(tmp_path / "m")
    r = mem.call("insert", {"path": "/memories/user.md", "insert_line": 5, "insert_text": "detail " * 300})
    assert r.is_error and "over this store's budget of 300" in r.text and "subfolder" in r.text
    assert snap(tmp_path / "m") == before
    # Detail below the root is external memory: not counted.
    assert not mem.call(
        "create", {"path": "/memories/ada/log.md", "file_text": fm("log", "detail " * 300)}
    ).is_error
    # Moving that file into the root would load it every time: refused too.
    r = mem.call("rename", {"old_path": "/memories/ada/log.md", "new_path": "/memories/log.md"})
    assert r.is_error and "budget" in r.text and (tmp_path / "m" / "ada" / "log.md").exists()


def test_core_budget_lets_an_over_budget_store_shrink(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m")
    mem.call("create", {"path": "/memories/user.md", "file_text": fm("user", "detail " * 300)})
    tight = Memory(tmp_path / "m", guards=Guards(core_budget=100))
    r = tight.call(
        "str_replace",
        {"path": "/memories/user.md", "old_str": "detail " * 300, "new_str": "see /memories/ada\n"},
    )
    assert not r.is_error, r.text


def test_fanout_cap(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "m", guards=Guards(fanout_cap=3))
    for n in ("a", "b"):
        assert not mem.call("create", {"path": f"/memories/people/{n}.md", "file_text": fm(n)}).is_error
    assert not mem.call("create", {"path": "/memories/people/c.md", "file_text": fm("c")}).is_error
    before = snap(tmp_path / "m")
    r = mem.call("create", {"path": "/memories/people/d.md", "file_text": fm("d")})
    assert r.is_error and "/memories/people already holds 3 entries" in r.text and "subfolder" in r.text
    r = mem.call(
        "create", {"path": "/memories/people/team/d.md", "file_text": fm("d")}
    )  # a new folder is an entry too
    assert r.is_error and "/memories/people/team" in r.text
    r = mem.call("rename", {"old_path": "/memories/MEMORY.md", "new_path": "/memories/people/MEMORY.md"})
    assert r.is_error
    assert snap(tmp_path / "m") == before
    # Renaming inside the full folder adds nothing; deeper folders have their own count.
    assert not mem.call(
        "rename", {"old_path": "/memories/people/c.md", "new_path": "/memories/people/cc.md"}
    ).is_error
    assert not mem.call("create", {"path": "/memories/places/x/y.md", "file_text": fm("y")}).is_error


FACTS = (
    "- alice | diet: vegan (since 2023-05-02) [S6T5]\n- 2023-05-02: Alice adopted a cat [S6T7]\nloose note\n"
)


def _reorg_store(tmp_path: Path) -> Memory:
    mem = Memory(tmp_path / "m", guards=Guards(preserve_facts=True))
    mem.call("create", {"path": "/memories/dump/s6.md", "file_text": fm("s6", FACTS)})
    mem.call("create", {"path": "/memories/people/alice.md", "file_text": fm("alice", "# Alice\n")})
    return mem


def test_preservation_refuses_a_dropped_fact(tmp_path: Path) -> None:
    mem = _reorg_store(tmp_path)
    before = snap(tmp_path / "m")
    r = mem.call(
        "str_replace",
        {
            "path": "/memories/dump/s6.md",
            "old_str": "- 2023-05-02: Alice adopted a cat [S6T7]\n",
            "new_str": "",
        },
        reorganize=True,
    )
    assert r.is_error and "Alice adopted a cat [S6T7]" in r.text and "Copy the line" in r.text
    r = mem.call("delete", {"path": "/memories/dump"}, reorganize=True)
    assert r.is_error and "and 1 more fact line" in r.text
    # Rewording a fact is dropping it too.
    r = mem.call(
        "str_replace",
        {"path": "/memories/dump/s6.md", "old_str": "vegan", "new_str": "plant-based"},
        reorganize=True,
    )
    assert r.is_error and "diet: vegan" in r.text
    assert snap(tmp_path / "m") == before
    # Lines without a locator are not facts; dropping them is fine.
    assert not mem.call(
        "str_replace",
        {"path": "/memories/dump/s6.md", "old_str": "loose note\n", "new_str": ""},
        reorganize=True,
    ).is_error


def test_preservation_allows_moving_facts(tmp_path: Path) -> None:
    mem = _reorg_store(tmp_path)
    # Copy first (a different bullet style and spacing is the same fact), then drop the source.
    moved = "* alice | diet:  vegan (since 2023-05-02) [S6T5]\n- 2023-05-02: Alice adopted a cat [S6T7]\n"
    assert not mem.call(
        "insert",
        {"path": "/memories/people/alice.md", "insert_line": 5, "insert_text": moved},
        reorganize=True,
    ).is_error
    r = mem.call("delete", {"path": "/memories/dump"}, reorganize=True)
    assert not r.is_error, r.text
    # Renames never lose facts.
    assert not mem.call(
        "rename", {"old_path": "/memories/people", "new_path": "/memories/friends"}, reorganize=True
    ).is_error
    assert "adopted a cat [S6T7]" in (tmp_path / "m" / "friends" / "alice.md").read_text()


def test_preservation_applies_only_to_reorganization_steps(tmp_path: Path) -> None:
    mem = _reorg_store(tmp_path)
    assert not mem.call("delete", {"path": "/memories/dump/s6.md"}).is_error  # an ordinary session may delete
    off = Memory(tmp_path / "n")
    off.call("create", {"path": "/memories/s.md", "file_text": fm("s", FACTS)})
    assert not off.call(
        "delete", {"path": "/memories/s.md"}, reorganize=True
    ).is_error  # guard not switched on


def test_guards_through_a_plain_harness(tmp_path: Path) -> None:
    """Any harness over a GuardedStore is held to the guards; the session mark is harness meta."""
    Memory(tmp_path / "m")
    store = open_store(tmp_path / "m", guards=Guards(preserve_facts=True))
    Harness(store, "manage").call("create", {"path": "/memories/s.md", "file_text": fm("s", FACTS)})
    reorganizer = Harness(store, "manage", role="reorganizer", reorganize=True)
    r = reorganizer.call("delete", {"path": "/memories/s.md"})
    assert r.is_error and (tmp_path / "m" / "s.md").exists()


def test_fact_key() -> None:
    assert fact_key("no locator here") is None
    assert fact_key("  - a  b [S1T2]") == fact_key("* a b [S1T2]") == (("S1T2",), "a b")
    assert fact_key("x [B3M12, S1T1]") == fact_key("**X** [S1T1, B3M12]") == (("B3M12", "S1T1"), "x")
    assert fact_key("x [T1]") is None


SKILL = "---\nname: heat\ndescription: heat procedure\nmetadata:\n  type: skill\n---\n# Heat\n1. take [E1]\n"


def test_outcome_gate_keeps_failed_attempts_out_of_procedures(tmp_path: Path) -> None:
    Memory(tmp_path / "m")
    store = open_store(tmp_path / "m", guards=Guards(outcome_gate=True))
    failed = Harness(store, "manage", role="curator", outcome="failure")
    r = failed.call("create", {"path": "/memories/skills/heat.md", "file_text": SKILL})
    assert r.is_error and "only a successful attempt" in r.text and "note" in r.text
    assert not (tmp_path / "m" / "skills").exists()
    won = Harness(store, "manage", role="curator", outcome="success")
    assert not won.call("create", {"path": "/memories/skills/heat.md", "file_text": SKILL}).is_error
    before = snap(tmp_path / "m")
    r = failed.call("insert", {"path": "/memories/skills/heat.md", "insert_line": 8, "insert_text": "2. x"})
    assert r.is_error and "'2. x'" in r.text and snap(tmp_path / "m") == before
    # A failure may still narrow a procedure, and may write notes anywhere.
    fix = {"path": "/memories/skills/heat.md", "old_str": "1. take [E1]\n", "new_str": ""}
    assert not failed.call("str_replace", fix).is_error
    note = SKILL.replace("type: skill", "type: note").replace("name: heat", "name: oops")
    assert not failed.call("create", {"path": "/memories/notes/oops.md", "file_text": note}).is_error
    # Without the guard (or without an outcome in the step) nothing is refused.
    plain = Harness(open_store(tmp_path / "m", guards=Guards()), "manage", outcome="failure")
    assert not plain.call(
        "insert", {"path": "/memories/skills/heat.md", "insert_line": 7, "insert_text": "x"}
    ).is_error
