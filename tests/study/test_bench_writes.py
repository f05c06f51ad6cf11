"""`memdir study bench writes`: write quality scored on hand-made stores whose every verdict is known
before the run, the LoCoMo observation loader on the real file, and the command end to end
(rows, resume, plot, JSON) on a slice of one conversation with the offline curator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memdir.agents import manage_chunk
from memdir.cli.main import cli
from memdir.fact_quality import content_f1, junk_reason
from memdir.models import get_model
from memdir.store.store import Store
from memdir.stream import Turn, chunk_stream
from memdir_study.bench.locomo import Observation, observations_from_raw
from memdir_study.eval.writes import KEPT, VERBATIM, claim_of, score, store_fact_lines

D = "2023-05-01"
TURNS = [
    Turn("S1T1", "Alice", "I love it so much", D),
    Turn("S1T2", "Alice", "Guess what, I adopted a cat called Miso today at the shelter near my flat", D),
    Turn("S1T3", "Bob", "I ran my first marathon in Boston last spring", D),
    Turn("S1T4", "Bob", "I grow tomatoes in my garden in Leeds every single summer", D),
    Turn("S1T5", "Alice", "I grow tomatoes in my garden in York every single summer", D),
]
VEGETABLES = (
    "tomatoes basil peppers onions garlic carrots beans squash lettuce spinach kale radish melon pumpkin"
)
LINES = {
    "junk_keyed": f"- alice | preference: it (since {D}) [S1T1]",
    "cat": "- Alice adopted a cat called Miso [S1T2]",
    "forged": "- Alice moved to Lisbon [S9T9]",
    "verbatim": f"- {D}: Bob: I ran my first marathon in Boston last spring [S1T3]",
    "unsupported": "- Bob won the marathon [S1T3]",
    "at_threshold": "- Bob grows tomatoes in Leeds [S1T4]",
    "below_threshold": "- Alice grows tomatoes in York [S1T5]",
    "kind": f"- {D}: Bob | plan: marathon in Boston [S1T3]",  # the KIND grammar: label not judged
}
GOLD = [
    Observation(1, "Alice", "Alice adopted a cat named Miso from the shelter", ("S1T2",)),
    Observation(1, "Bob", f"Bob grows {VEGETABLES}", ("S1T4",)),  # 16 content words
    Observation(1, "Alice", f"Alice grows {VEGETABLES} cucumber", ("S1T5",)),  # 17
    Observation(1, "Bob", "Bob ran his first marathon in Boston", ("S1T3",)),
]


def _store(root: Path, lines: dict[str, str]) -> Store:
    store = Store(root, create=True)
    body = "\n".join(lines.values())
    with store.step("create"):
        store.create("/memories/people/notes.md", f"---\ndescription: notes\n---\n# Notes\n\n{body}\n")
        store.create("/memories/MEMORY.md", "---\ndescription: root\n---\n# Memory\n\n- people/: notes\n")
    return store


def test_the_thresholds_fall_where_the_hand_made_lines_say() -> None:
    """The store below is built on these: one line exactly at the kept threshold, one under it,
    the distilled lines short of the verbatim one."""
    assert content_f1(claim_of(LINES["at_threshold"]), GOLD[1].text) == KEPT  # 2*3 / (4 + 16)
    assert content_f1(claim_of(LINES["below_threshold"]), GOLD[2].text) < KEPT  # 2*3 / (4 + 17)
    claim = claim_of(LINES["cat"])
    assert claim == "alice adopted a cat called miso"
    assert content_f1(claim, f"Alice {TURNS[1].text}") < VERBATIM
    assert claim_of(LINES["junk_keyed"]) == "alice preference it"
    assert claim_of(LINES["verbatim"]) == "bob i ran my first marathon in boston last spring"


def test_score_of_a_hand_made_store(tmp_path: Path) -> None:
    s = score(store_fact_lines(_store(tmp_path, LINES)), TURNS, GOLD, ["Alice", "Bob"])
    assert dict(s.lines) == {"all": 8, "distilled": 7, "verbatim": 1}
    # good: the cat line, both tomato lines, the plan (distilled); the marathon turn (verbatim).
    # The junk keyed value is supported (its subject is a speaker) but junk; the forged and the
    # won-the-marathon lines are not supported
    assert dict(s.good) == {"all": 5, "distilled": 4, "verbatim": 1}
    assert s.precision("distilled") == 4 / 7 and s.precision("verbatim") == 1.0
    assert s.forged == 1 and s.keyed == 1 and s.kind_lines == 1
    assert dict(s.junk) == {"pronoun": 1} and s.junk_rate() == 1 / 7
    assert s.supported["distilled"] == 5  # junk keyed, cat, both tomato lines, the plan
    # kept: the cat (distilled), Bob's vegetables at the threshold (distilled), the marathon
    # (the verbatim line, and the unsupported distilled one: recall asks no support); Alice's
    # vegetables are under the threshold
    assert s.observations == 4
    assert dict(s.kept) == {"all": 3, "distilled": 3, "verbatim": 1, "distilled_strict": 2}
    assert s.recall("all") == 0.75 and s.recall("verbatim") == 0.25
    shown = s.examples["unsupported"]
    assert any(e.startswith("forged: /memories/people/notes.md:") and "Lisbon" in e for e in shown)
    assert any("won the marathon" in e for e in shown)
    assert s.examples["junk"] == [f"pronoun: /memories/people/notes.md:6: {LINES['junk_keyed']}"]


def test_scores_add_up_and_round_trip(tmp_path: Path) -> None:
    one = score(store_fact_lines(_store(tmp_path / "a", LINES)), TURNS, GOLD, [])
    two = score(store_fact_lines(_store(tmp_path / "b", {"v": LINES["verbatim"]})), TURNS, GOLD[3:], [])
    both = one + two
    assert both.lines["all"] == 9 and both.observations == 5 and both.kept["verbatim"] == 2
    assert type(both).from_json(both.as_json()).as_json() == both.as_json()


def test_no_reference_leaves_recall_undefined(tmp_path: Path) -> None:
    s = score(store_fact_lines(_store(tmp_path, LINES)), TURNS, None, [])
    assert s.recall("all") is None and s.as_json()["recall"]["distilled"] is None
    assert s.precision("distilled") == 4 / 7  # precision and junk need no reference


def test_a_whole_line_is_not_judged_cut_by_its_last_word() -> None:
    assert junk_reason("keep going for it") == "fragment"  # a value cut from a turn
    assert junk_reason("keep going for it", whole=True) is None  # the turn itself
    assert junk_reason("about this game is that it has", whole=True) == "fragment"  # opens cut
    assert junk_reason("it was great", whole=True) == "pronoun"


def test_the_offline_curator_keeps_a_fact_said_in_a_long_turn(tmp_path: Path) -> None:
    """Two facts of LoCoMo conv-41 (the horizon year's misses on seed 4242, issue 51), each said in
    one sentence of a long turn: the offline curator's lines keep both by the kept rule, and every
    line it wrote is good and true."""
    turns = [
        Turn(
            "S2T10",
            "John",
            "Thanks a lot, Maria. Your help is really motivating and makes me more determined. Here's a "
            "pic of my family - they're the reason why I never give up. Their love gives me strength. "
            "[shares a photo: a photography of a family having a picnic in the park]",
            "2022-12-22",
        ),
        Turn(
            "S2T28",
            "John",
            "Yep, let's keep making great memories with our loved ones and cherishing the time we have. "
            "I'm off to do some taekwondo!",
            "2022-12-22",
        ),
    ]
    family = "John's family serves as a source of strength and motivation for him."
    gold = [
        Observation(2, "John", family, ("S2T10",)),
        Observation(2, "John", "John practices taekwondo.", ("S2T28",)),
    ]
    store = Store(tmp_path / "mem", create=True)
    asyncio.run(manage_chunk(get_model("offline"), store, chunk_stream(turns, max_turns=4)[0]))
    s = score(store_fact_lines(store), turns, gold)
    assert s.kept["all"] == 2
    assert s.precision("all") == s.strict_precision("all") == 1.0 and s.junk_lines == s.forged == 0


def test_observations_are_read_leniently_and_skips_are_counted() -> None:
    raw: dict[str, Any] = {
        "sample_id": "conv-x",
        "qa": [],
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I bake bread."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "I fix bikes."},
            ],
        },
        "observation": {
            "session_1_observation": {
                "Ann": [["Ann bakes bread.", "D1:1"], ["Ann and Ben talk.", ["D1:1", "D1:2"]]],
                "Ben": [
                    ["Ben fixes bikes.", "D1:2."],  # a stray dot
                    ["Ben has a van.", "D1:9"],  # names no turn
                    ["Ben is tall.", "D1:2; D4:4"],  # one of two names no turn
                    ["no evidence"],
                ],
            },
            "summary": "not a session",
        },
    }
    found = observations_from_raw(raw)
    assert [(o.speaker, o.text, o.evidence) for o in found.facts] == [
        ("Ann", "Ann bakes bread.", ("S1T1",)),
        ("Ann", "Ann and Ben talk.", ("S1T1", "S1T2")),
        ("Ben", "Ben fixes bikes.", ("S1T2",)),
        ("Ben", "Ben is tall.", ("S1T2",)),
    ]
    assert dict(found.skipped) == {
        "evidence locator naming no turn (dropped)": 2,
        "no evidence turn": 1,
        "not a [fact, evidence] pair": 1,
        "session entry not session_N_observation -> {speaker: [...]}": 1,
    }
    assert [o.text for o in found.sliced(2, 3).facts] == []


def _locomo() -> None:
    from memdir_study.bench import DataUnavailable, locomo

    try:
        locomo.load_all()
    except DataUnavailable as exc:
        pytest.skip(f"LoCoMo's data file is needed (set MEMDIR_DATA): {exc}")


def test_observations_of_the_real_file() -> None:
    _locomo()
    from memdir_study.bench import locomo

    total = 0
    for cid in locomo.sample_ids():
        found = locomo.observations(cid)
        turns = locomo.load(cid).locators()
        assert found.facts and all(set(o.evidence) <= turns for o in found.facts)
        total += len(found.facts) + sum(found.skipped.values())
    assert total == 2541  # every entry of the file, read or counted as skipped
    first = locomo.observations("conv-26").facts[0]
    assert first.speaker == "Caroline" and first.evidence == ("S1T3",)
    assert first.text.startswith("Caroline attended an LGBTQ support group")


@pytest.mark.slow
def test_cli_offline_slice_rows_resume_plot_and_json(tmp_path: Path) -> None:
    _locomo()
    out = tmp_path / "run"
    args = ["study", "bench", "writes", "-b", "locomo", "-c", "conv-50"]
    args += ["--model", "offline", "--sessions", "1-2"]
    args += ["--out", str(out), "--no-progress"]
    res = CliRunner().invoke(cli, [*args, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    rows = [json.loads(line) for line in (out / "writes.jsonl").read_text().splitlines()]
    assert [r["conversation"] for r in rows] == ["conv-50"] and rows[0]["sessions"] == "1-2"
    assert rows[0]["curates"] == "offline" and rows[0]["usage"]["calls"] == 0
    assert rows[0]["chunks"] == len(rows[0]["chunk_seconds"]) > 0
    pooled = data["pooled"]
    assert data["conversations"]["conv-50"]["recall"] == pooled["recall"]
    assert pooled["observations"] > 0 and 0 < pooled["recall"]["all"] <= 1
    assert pooled["fact_lines"]["verbatim"] > 0 and pooled["per_chunk"]["calls"] == 0
    assert json.loads((out / "summary.json").read_text()) == data
    assert (out / "writes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "stores" / "conv-50" / ".memdir" / "journal.git").is_dir()  # journaled like ingest
    # a second run skips the finished conversation: the store is not rebuilt, the row not repeated
    marker = out / "stores" / "conv-50" / "untouched.md"
    marker.write_text("---\ndescription: x\n---\n# x\n\n- dave | preference: it (since 2023-04-01) [S1T1]\n")
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert "conv-50: already in" in again.stderr and marker.exists()
    assert [json.loads(line) for line in (out / "writes.jsonl").read_text().splitlines()] == rows
    assert "write quality: locomo, offline (offline), sessions 1-2" in again.stdout
    # --rescore scores the kept store again (the planted junk line counts), keeping its build cost
    rescored = CliRunner().invoke(cli, [*args, "--rescore"])
    assert rescored.exit_code == 0, rescored.output
    [row] = [json.loads(line) for line in (out / "writes.jsonl").read_text().splitlines()]
    assert row["score"]["junk_lines"] == rows[0]["score"]["junk_lines"] + 1
    assert (row["seconds"], row["usage"]) == (rows[0]["seconds"], rows[0]["usage"])
    # other settings in the same folder are refused, naming the one that differs
    other = CliRunner().invoke(cli, [*args[:-4], "1-3", "--out", str(out), "--no-progress"])
    assert other.exit_code != 0 and "sessions" in other.output
    # several runs on one plot
    png = tmp_path / "both.png"
    plot = ["study", "bench", "writes-plot", str(out), str(out), "--out", str(png)]
    plotted = CliRunner().invoke(cli, plot)
    assert plotted.exit_code == 0, plotted.output
    assert png.read_bytes()[:4] == b"\x89PNG" and "offline offline (locomo s1-2)" in plotted.output


@pytest.mark.slow
def test_cli_rebuilds_a_store_a_stopped_run_left(tmp_path: Path) -> None:
    _locomo()
    out = tmp_path / "run"
    stray = out / "stores" / "conv-26" / "half.md"
    stray.parent.mkdir(parents=True)
    stray.write_text("half written\n")
    args = ["study", "bench", "writes", "-b", "locomo", "-c", "conv-26"]
    args += ["--model", "offline", "--sessions", "1"]
    res = CliRunner().invoke(cli, [*args, "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert not stray.exists() and "rebuilding" in res.stderr
    assert (out / "stores" / "conv-26" / "MEMORY.md").exists()


def test_cli_refuses_split_for_the_offline_model_and_an_unknown_conversation(tmp_path: Path) -> None:
    _locomo()
    base = ["study", "bench", "writes", "-b", "locomo", "--model", "offline"]
    base += ["--out", str(tmp_path), "--no-progress"]
    split = CliRunner().invoke(cli, [*base, "--curation", "split"])
    assert split.exit_code != 0 and "split curation needs a model" in split.output
    unknown = CliRunner().invoke(cli, [*base, "-c", "conv-99"])
    assert unknown.exit_code != 0 and "locomo has no conv-99; choose from conv-26" in unknown.output
    assert not (tmp_path / "writes.jsonl").exists()
