"""check (supersede integrity and the rest) and diff --facts (preservation), on real stores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from memdir.analytics import facts
from memdir.analytics.integrity import check, diff_facts
from memdir.cli.main import cli
from memdir.conventions import locators, normalize
from memdir.store.store import Store

INDEX = "---\ndescription: {d}\n---\n# {t}\n"


def md(name: str, desc: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {desc}\n---\n{body}\n"


ALICE = md(
    "alice",
    "Alice Park",
    (
        "# Alice\n## Diet\n"
        "- alice | diet: vegan (since 2023-05-02) [S6T5]\n"
        "- ~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]\n"
        "## Work\n- Nurse at **St. Mary's** hospital [S2T7]\n"
        "- 2023-05-02: Alice adopted a beagle named Max [S6T7]\n"
        "- Max the beagle is afraid of thunder [S7T2]\n"
        "See also /memories/people/bob.md"
    ),
)
BOB = md(
    "bob",
    "Bob Stone",
    "# Bob\n- bob | job: carpenter (since 2021-03-01) [S2T1]\n- Bob builds oak tables [S3T3]",
)


def build(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def clean_store(root: Path) -> Path:
    return build(
        root,
        {
            "MEMORY.md": INDEX.format(d="root", t="Memory"),
            "people/MEMORY.md": INDEX.format(d="people", t="People"),
            "people/alice.md": ALICE,
            "people/bob.md": BOB,
        },
    )


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


def test_clean_store_passes(tmp_path: Path) -> None:
    root = clean_store(tmp_path / "s")
    report = check(Store(root))
    assert report.ok, report.problems
    assert report.counts["keyed_facts"] == 3 and report.counts["live_keys"] == 2
    assert run("check", str(root))[0] == 0


def test_check_catches_a_planted_stale_live_value(tmp_path: Path) -> None:
    root = clean_store(tmp_path / "s")
    # Alice's history split across files: the old value stands live in another file.
    stale = "- Alice | Diet: vegetarian (since 2022-01-10) [S1T4]"
    build(
        root,
        {"notes/MEMORY.md": INDEX.format(d="notes", t="Notes"), "notes/food.md": md("food", "food", stale)},
    )
    code, out = run("check", str(root), "--json")
    assert code == 1
    problems = json.loads(out)["problems"]
    assert [p["rule"] for p in problems] == ["supersede", "supersede"]
    two_live = next(p for p in problems if "2 live values" in p["message"])
    assert "/memories/notes/food.md:5" in two_live["message"]
    assert "/memories/people/alice.md:7" in two_live["message"]
    # and the stale live line began before the superseded value ended
    dates = next(p for p in problems if p is not two_live)
    assert dates["path"] == "/memories/notes/food.md:5" and "ended (2023-05-02)" in dates["message"]


def test_check_rules(tmp_path: Path) -> None:
    root = clean_store(tmp_path / "s")
    build(
        root,
        {
            "people/carol.md": md(
                "caroline",
                "Carol",
                "see /memories/people/zed.md and see /memories/people/bob.md > ## Hobbies",
            ),
            **{f"people/p{i}.md": md(f"p{i}", f"person {i}", "x") for i in range(3)},
        },
    )
    report = check(Store(root), fanout_cap=5, budget=10)
    rules = sorted({(p.rule, p.path.split(":")[0]) for p in report.problems})
    assert rules == [
        ("core-budget", "/memories"),
        ("dangling-xref", "/memories/people/carol.md"),
        ("fanout", "/memories/people"),
        ("name-stem", "/memories/people/carol.md"),
    ]
    assert sum(p.rule == "dangling-xref" for p in report.problems) == 2  # missing file, missing section


def test_keyed_format_warning(tmp_path: Path) -> None:
    root = clean_store(tmp_path / "s")
    build(root, {"people/dan.md": md("dan", "Dan", "- dan | city: Oslo [S9T1]")})
    report = check(Store(root))
    assert report.ok and [w.rule for w in report.warnings] == ["keyed-format"]


def test_fact_parsing() -> None:
    line = "- ~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]"
    kf = facts.parse_keyed("/m.md", 1, line)
    assert kf is not None and not kf.live and kf.until == "2023-05-02" and kf.key == ("alice", "diet")
    live = facts.parse_keyed("/m.md", 2, "* Alice  |  Travel Plan: Paris (since unknown) [B3M12, S1T1]")
    assert (
        live is not None
        and live.live
        and live.key == ("alice", "travel plan")
        and live.locators == ("B3M12", "S1T1")
    )
    assert locators("no locator [S1] here") == ()
    assert normalize("## **Nurse** at  _St. Mary's_ [S2T7]") == normalize("- nurse at St. Mary's [S2T7]")


def moved_only(old: Path, new: Path) -> None:
    """A reorganization that moves, renames and regroups, keeping every fact line's words."""
    shutil.copytree(old, new)
    (new / "people" / "alice.md").unlink()
    build(
        new,
        {
            "people/alice-park/MEMORY.md": INDEX.format(d="Alice", t="Alice"),
            "people/alice-park/diet.md": md(
                "diet",
                "Alice's diet",
                (
                    "### Diet history\n"
                    "* alice | diet: vegan (since 2023-05-02) [S6T5]\n"
                    "* ~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]"
                ),
            ),
            "people/alice-park/life.md": md(
                "life",
                "Alice's work and pets",
                (
                    "# Pets\n1. Max the beagle is afraid of thunder [S7T2]\n"
                    "2. 2023-05-02: Alice adopted a beagle named Max [S6T7]\n"
                    "# Work\n- Nurse at St. Mary's hospital   [S2T7]"
                ),
            ),
        },
    )
    (new / "people" / "bob.md").rename(new / "bob-stone.md")


def test_diff_facts_passes_a_move_only_pass(tmp_path: Path) -> None:
    old = clean_store(tmp_path / "old")
    moved_only(old, tmp_path / "new")
    d = diff_facts(Store(old), Store(tmp_path / "new"))
    assert d.ok and d.old_facts == 7 and d.moved == 7 and d.kept_in_place == 0
    assert run("diff", str(old), str(tmp_path / "new"), "--facts")[0] == 0


def test_diff_facts_catches_condensing(tmp_path: Path) -> None:
    old = clean_store(tmp_path / "old")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    text = (new / "people" / "alice.md").read_text()
    condensed = text.replace(
        "- 2023-05-02: Alice adopted a beagle named Max [S6T7]\n"
        "- Max the beagle is afraid of thunder [S7T2]\n",
        "- Alice's beagle Max (adopted 2023) fears thunder [S6T7, S7T2]\n",
    )
    assert condensed != text
    (new / "people" / "alice.md").write_text(condensed)
    code, out = run("diff", str(old), str(new), "--facts", "--json")
    assert code == 1
    missing = json.loads(out)["missing"]
    assert [(m["path"], m["line"], m["locators"]) for m in missing] == [
        ("/memories/people/alice.md", 11, ["S6T7"]),
        ("/memories/people/alice.md", 12, ["S7T2"]),
    ]
    code, out = run("diff", str(old), str(new), "--facts")
    assert code == 1 and "MISSING /memories/people/alice.md:11" in out


def test_diff_facts_same_words_other_locator_is_missing(tmp_path: Path) -> None:
    old = clean_store(tmp_path / "old")
    new = tmp_path / "new"
    shutil.copytree(old, new)
    p = new / "people" / "bob.md"
    p.write_text(p.read_text().replace("[S3T3]", "[S3T4]"))
    d = diff_facts(Store(old), Store(new))
    assert [m.text for m in d.missing] == ["- Bob builds oak tables [S3T3]"]
