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
    # The folder's MEMORY.md (made by the API's folder index keeping) is one of its entries.
    mem = Memory(tmp_path / "m", guards=Guards(fanout_cap=4))
    for n in ("a", "b"):
        assert not mem.call("create", {"path": f"/memories/people/{n}.md", "file_text": fm(n)}).is_error
    assert not mem.call("create", {"path": "/memories/people/c.md", "file_text": fm("c")}).is_error
    before = snap(tmp_path / "m")
    r = mem.call("create", {"path": "/memories/people/d.md", "file_text": fm("d")})
    assert r.is_error and "/memories/people already holds 4 entries" in r.text and "subfolder" in r.text
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


ALICE = "- Alice | diet: vegan (since 2023-05-02) [S6T5]\n"


def test_one_live_value_refuses_a_second_live_line_and_shows_the_supersede_form(tmp_path: Path) -> None:
    Memory(tmp_path / "m")
    store = open_store(tmp_path / "m", guards=Guards(one_live_value=True))
    h = Harness(store, "manage")
    assert not h.call("create", {"path": "/memories/alice.md", "file_text": fm("alice", ALICE)}).is_error
    before = snap(tmp_path / "m")
    # the same fact again, in another file: refused as a repeat
    again = fm("people", "- alice | Diet: vegan (since 2023-06-01) [S7T1]\n")
    r = h.call("create", {"path": "/memories/people.md", "file_text": again})
    assert r.is_error and "already has a live value at /memories/alice.md:5" in r.text
    assert "adds it again" in r.text and "Nothing was written" in r.text
    # a new value without striking the old one: refused, with the struck-through line to write
    r = h.call(
        "str_replace",
        {
            "path": "/memories/alice.md",
            "old_str": ALICE,
            "new_str": ALICE + "- Alice | diet: vegetarian (since 2024-01-10) [S9T2]\n",
        },
    )
    assert r.is_error
    assert "'- ~~Alice | diet: vegan~~ (2023-05-02 until 2024-01-10) [S6T5]'" in r.text
    r = h.call("insert", {"path": "/memories/alice.md", "insert_line": 5, "insert_text": ALICE})
    assert r.is_error
    assert snap(tmp_path / "m") == before  # every refusal left the store byte-identical
    # doing what the refusal says is accepted, and `check` then finds one live value
    struck = "- ~~Alice | diet: vegan~~ (2023-05-02 until 2024-01-10) [S6T5]\n"
    new = struck + "- Alice | diet: vegetarian (since 2024-01-10) [S9T2]\n"
    r = h.call("str_replace", {"path": "/memories/alice.md", "old_str": ALICE, "new_str": new})
    assert not r.is_error, r.text
    from memdir.analytics.integrity import check

    assert not [p for p in check(store).problems if p.kind == "supersede"]


def test_one_live_value_does_not_block_a_store_that_already_broke_it(tmp_path: Path) -> None:
    """Lines a file already holds are not judged again: an unrelated write still lands."""
    Memory(tmp_path / "m")
    plain = open_store(tmp_path / "m")
    Harness(plain, "manage").call("create", {"path": "/memories/a.md", "file_text": fm("a", ALICE + ALICE)})
    h = Harness(open_store(tmp_path / "m", guards=Guards(one_live_value=True)), "manage")
    r = h.call("str_replace", {"path": "/memories/a.md", "old_str": "about a", "new_str": "Alice's diet"})
    assert not r.is_error, r.text
    r = h.call(
        "create",
        {"path": "/memories/b.md", "file_text": fm("b", "- Bob | job: pilot (since 2020-01-01) [S1T1]\n")},
    )
    assert not r.is_error, r.text
