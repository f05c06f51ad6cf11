"""The ingest strategy (`memdir ingest --strategy auto`): real stores, the offline curator or a
scripted model at the LLM boundary, the real journal and CLI."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_helpers import new_store, snapshot
from memdir.agents.dump_format import is_session_file, parse_session, read_dump, session_text, turn_line
from memdir.agents.ingest import NoOpWarning, ingest
from memdir.agents.strategy import (
    STATE_FILE,
    StrategyResult,
    ingest_by_strategy,
    layout,
    read_state,
    recorded_switch,
)
from memdir.analytics.integrity import diff_facts
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import Model, get_model
from memdir.models.scripted import answer, call
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.stream import Turn, dump_turns
from memdir.words import sentences
from memdir_study.bench.generated import load
from memdir_study.variants.dump import write_dump

SAMPLE = load("gen-s42-n10")
THRESHOLD = 2.5  # KB: the 10-session stream passes it in its 5th session


def by_session(first: int, last: int) -> list[Turn]:
    return [t for t in SAMPLE.turns if first <= t.session <= last]


def shaped(model: Model, store: Store, turns: list[Turn], strategy: str, **kw: float) -> StrategyResult:
    return asyncio.run(ingest_by_strategy(model, store, turns, strategy=strategy, **kw))  # type: ignore[arg-type]


def session_files(store: Store) -> list[str]:
    return [e.path.name for e in store.files() if is_session_file(e.path)]


def test_dump_writes_session_files_in_one_step_without_a_model_call(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    silent = get_model("scripted", script=[])  # any call would fail: the script is empty
    steps = len(Journal(store.root).steps())
    first = shaped(silent, store, by_session(1, 2) + by_session(3, 3)[:3], "dump")
    assert first.went == "dump" and first.ingest is None and silent.usage.calls == 0
    assert session_files(store) == ["session-01.md", "session-02.md", "session-03.md"]
    assert len(Journal(store.root).steps()) == steps + 1
    index = store.read_text("/memories/MEMORY.md")
    assert "- session-02.md: session 2 (2023-01-" in index and "Verbatim dump" in index
    rest = by_session(3, 3)[3:] + by_session(4, 4)
    second = shaped(silent, store, rest, "dump")
    assert second.merge is not None
    assert second.merge.created == ["/memories/session-04.md"]
    assert second.merge.appended == ["/memories/session-03.md"]
    assert "wrote 14 turn(s) into 2 session file(s) (1 new, 1 appended to)" in second.summary()
    assert len(Journal(store.root).steps()) == steps + 2 and silent.usage.calls == 0
    assert [t for s in read_dump(store).values() for t in s.turns] == by_session(1, 4)
    again = shaped(silent, store, rest, "dump")  # the same batch twice: nothing said twice
    assert again.wrote_nothing and "all 14 turn(s) were already in the dump" in again.summary()
    assert len(Journal(store.root).steps()) == steps + 2


def test_the_dump_reads_back_as_the_turns_it_was_written_from(tmp_path: Path) -> None:
    store = Store(tmp_path / "mem", create=True)
    write_dump(store, SAMPLE)
    assert [t for s in read_dump(store).values() for t in s.turns] == SAMPLE.turns
    odd = [
        Turn("S7T1", "Calvin", "no date, a [S1T2] inside and a: colon", None),
        Turn("S7T2", "Dee", "", "2023-05-02"),
        Turn("S7T3", "Dee", "spaced   out\nover lines", "2023-05-02T10:30:00+00:00"),
        Turn("S7T4", "Eve", "dated in words", "May 2"),
    ]
    text = session_text(7, "session-07", "May 2", odd)
    back = parse_session(text, "/memories/session-07.md")
    assert back.session == 7 and back.date == "May 2" and back.name == "session-07"
    # [S1T2] cites nothing; a turn with no date of its own reads back on its session's
    said = Turn("S7T1", "Calvin", "no date, a (S1T2) inside and a: colon", "May 2")
    spaced = Turn("S7T3", "Dee", "spaced out over lines", odd[2].date)
    assert list(back.turns) == [said, odd[1], spaced, odd[3]]
    assert session_text(7, back.name, back.date, list(back.turns)) == text
    with pytest.raises(MemdirError, match=r"session-07.md:10 is not the verbatim dump's"):
        parse_session(text + "- a note someone added\n", "/memories/session-07.md")


def test_auto_dumps_under_the_threshold_then_switches_once_and_curates(tmp_path: Path) -> None:
    offline = get_model("offline")
    store = new_store(tmp_path / "mem")
    direct = new_store(tmp_path / "direct")
    went = []
    for n in range(1, 8):
        batch = by_session(n, n)
        went.append(shaped(offline, store, batch, "auto", threshold_kb=THRESHOLD))
        asyncio.run(ingest(offline, direct, batch))
    assert [r.went for r in went] == ["dump"] * 4 + ["switch", "curate", "curate"]
    assert went[3].dump_kb <= THRESHOLD < went[4].dump_kb
    assert "strategy auto: dump (2.3 KB of 2.5 KB)" in went[3].summary()
    s = went[4].switch
    assert s is not None and (s.turns, s.new_turns, s.locator, s.session) == (40, 8, "S5T1", 5)
    assert s.chunk == 7 and s.dump_kb == round(went[4].dump_kb, 2) and s.threshold_kb == THRESHOLD
    assert went[4].summary() == (
        "strategy auto: switched to curation at 2.8 KB of 2.5 KB (after 40 dumped turns; at S5T1: session 5, "
        "chunk 7): curated 40 backlog turns + 8 new"
    )
    # the curator dates each turn line; the dump leaves the session's date off its lines (the
    # paper's size, Table 3), so its lines are kept by locator, none byte for byte
    assert (went[4].verbatim, went[4].by_locator, went[4].kept) == (0, 48, {})
    assert session_files(store) == [] and layout(store) == "curated"
    assert "it switched at 2.8 KB, after 40 turns" in went[6].summary()
    # The curated store is the one the management role builds from the first turn, and it holds
    # every turn of the stream, a line per sentence, dated, with its locator.
    assert snapshot(store) == snapshot(direct)
    baseline = Store(tmp_path / "baseline", create=True)
    with baseline.step("baseline"):
        said = [replace(t, text=s) for t in by_session(1, 7) for s in dict.fromkeys(sentences(t.text))]
        lines = "".join(turn_line(t) + "\n" for t in said)
        baseline.create("/memories/turns.md", "---\nname: turns\ndescription: every turn\n---\n" + lines)
    assert diff_facts(baseline, store).ok
    state = read_state(store)
    assert state is not None and state["layout"] == "curated" and state["switched_at"]["locator"] == "S5T1"
    tools = [st.tool for st in Journal(store.root).steps()]
    assert tools.count("verbatim_dump") == 4 and tools.count("strategy_switch") == 1
    # A store written before the switch was named a strategy keeps its record in `shape.json`.
    (store.state_dir / STATE_FILE).rename(store.state_dir / "shape.json")
    assert recorded_switch(store) == went[4].switch and went[4].switch is not None


def test_the_layout_comes_from_the_files_not_the_state_file(tmp_path: Path) -> None:
    offline = get_model("offline")
    store = new_store(tmp_path / "mem")
    assert layout(store) == "empty"
    shaped(offline, store, by_session(1, 1), "auto", threshold_kb=THRESHOLD)
    (store.state_dir / STATE_FILE).unlink()
    assert layout(store) == "dump"
    assert shaped(offline, store, by_session(2, 2), "auto", threshold_kb=THRESHOLD).went == "dump"
    # `curate` on a dump switches at once, whatever the size: no store is half dump, half curated.
    r = shaped(offline, store, by_session(3, 3), "curate")
    assert r.went == "switch" and r.summary().startswith("strategy curate: the store held a verbatim dump")
    (store.state_dir / STATE_FILE).unlink()
    assert layout(store) == "curated"
    assert shaped(offline, store, by_session(4, 4), "auto", threshold_kb=THRESHOLD).went == "curate"
    with pytest.raises(MemdirError, match="holds a curated store"):
        shaped(offline, store, by_session(5, 5), "dump")
    with pytest.raises(MemdirError, match="unknown strategy 'tidy'"):
        shaped(offline, store, by_session(5, 5), "tidy")


def test_turns_no_curated_file_cites_stay_in_their_session_file(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    turns = [
        Turn("S1T1", "Alice", "I became vegan last week.", "2023-05-09"),
        Turn("S1T2", "Bob", "Good for you!", "2023-05-09"),
    ]
    shaped(get_model("offline"), store, turns, "dump")
    note = (
        "---\nname: alice\ndescription: Alice's diet\n---\n"
        + "- alice | diet: vegan (since 2023-05-02) [S1T1]\n"
    )
    files_one = [call("create", path="/memories/alice.md", file_text=note), answer("ok")]
    model = get_model("scripted", script=files_one)  # files S1T1 (reworded), nothing else
    new = [Turn("S1T3", "Alice", "Thanks, Bob.", "2023-05-09")]
    r = shaped(model, store, new, "auto", threshold_kb=0)
    assert r.went == "switch" and (r.verbatim, r.by_locator) == (0, 1)
    assert r.kept == {"/memories/session-01.md": ["S1T2", "S1T3"]}
    kept = session_text(1, "session-01", "2023-05-09", [turns[1], *new])
    assert store.read_text("/memories/session-01.md") == kept
    assert store.read_text("/memories/alice.md") == note
    assert "2 turn(s) no curated file cites stay in 1 session file(s)" in r.landing()


def test_nothing_lands_when_curation_fails_or_the_store_changes_meanwhile(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    shaped(get_model("offline"), store, by_session(1, 2), "dump")
    before = snapshot(store)
    talker = get_model("scripted", script=[answer("I have noted all of it.")] * 4)
    with pytest.raises(MemdirError, match="curating the dump changed nothing"), pytest.warns(NoOpWarning):
        shaped(talker, store, by_session(3, 3), "auto", threshold_kb=0)
    assert snapshot(store) == before

    def meddle(_out: object) -> None:  # another writer, between two chunks of the curation
        with store.step("create"):
            if not store.exists("/memories/note.md"):
                store.create("/memories/note.md", "---\nname: note\ndescription: a note\n---\n")

    with pytest.raises(MemdirError, match="the store changed while its dump was being curated"):
        asyncio.run(
            ingest_by_strategy(
                get_model("offline"),
                store,
                by_session(3, 3),
                strategy="auto",
                threshold_kb=0,
                on_chunk=meddle,
            )
        )
    assert session_files(store) == ["session-01.md", "session-02.md"]


def test_cli_says_where_each_batch_went_and_where_it_switched(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    files = []
    for name, (a, b) in {"a": (1, 4), "b": (5, 5), "c": (6, 6)}.items():
        files.append(tmp_path / f"{name}.jsonl")
        files[-1].write_text("\n".join(dump_turns(by_session(a, b))) + "\n")

    def run(*args: str) -> tuple[int, str]:
        CliRunner().invoke(cli, ["init", str(root)])
        res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", *args])
        return res.exit_code, res.output

    code, out = run("--strategy", "auto", "--switch-kb", "2.5", str(files[0]))
    assert code == 0 and "strategy auto: dump (2.3 KB of 2.5 KB): wrote 40 turn(s) into 4 session" in out
    assert "model: offline (a baseline: no model calls)" in out
    code, out = run("--shape", "auto", "--switch-kb", "2.5", str(files[0]))  # the old spelling, hidden
    assert code == 1 and "40 of 40 turn(s) already in the store" in out  # the ingest ledger's answer
    code, out = run("--strategy", "auto", "--switch-kb", "2.5", str(files[1]))
    assert code == 0, out
    assert "strategy auto: switched to curation at 2.8 KB of 2.5 KB (after 40 dumped turns; at S5T1" in out
    assert "curated 40 backlog turns + 8 new" in out and "its session files removed" in out
    assert "integrated 48 turn(s) in 7 chunk(s)" in out
    code, out = run("--strategy", "auto", str(files[2]))
    assert code == 0 and "strategy auto: curate (it switched at 2.8 KB, after 40 turns)" in out
    assert json.loads((root / ".memdir" / STATE_FILE).read_text())["layout"] == "curated"
    code, out = run("--strategy", "tidy", str(files[2]))
    assert code == 2 and "Invalid value for '--strategy'" in out
    code, out = run("--switch-kb", "2.5", str(files[2]))
    assert code == 2 and "applies to --strategy auto only" in out
    code, out = run(str(files[2]))  # the default: curate, with no strategy line (these turns are in: none)
    assert code == 1 and "strategy" not in out and "already in the store" in out
