"""The offline policies end to end on a small conversation, the stream chunking rule, the
answer parser, and the ingest/ask commands."""

from __future__ import annotations

import asyncio
import datetime
import json
import re
from pathlib import Path

from click.testing import CliRunner

from agent_helpers import new_store, snapshot
from memdir.agents import RunRecord, answer_question, choose_option, manage_chunk, parse_answer
from memdir.agents.offline import Curator, keyed_facts
from memdir.analytics.integrity import check
from memdir.cli.main import cli
from memdir.models import get_model
from memdir.store import spec
from memdir.store.spec import DEFAULT_FANOUT_CAP
from memdir.stream import Turn, chunk_stream, load_turns
from memdir.tools.profiles import Harness
from memdir.words import sentences
from memdir_study.eval.runner import RunConfig, run_eval

CONVERSATION = [
    Turn("S1T1", "Alice", "Hi Bob! I prefer coffee in the morning, it keeps me going.", "2023-05-01"),
    Turn("S1T2", "Bob", "Good to hear. I work as a carpenter in Portland these days.", "2023-05-01"),
    Turn("S1T3", "Alice", "I adopted a dog named Rex last week, a little terrier.", "2023-05-01"),
    Turn("S1T4", "Bob", "My sister Dana is visiting Lisbon in July for a conference.", "2023-05-01"),
    Turn("S2T1", "Alice", "Guess what, I now prefer tea over coffee. Green tea mostly.", "2023-06-10"),
    Turn("S2T2", "Bob", "I moved to Seattle for a new job at a boat yard.", "2023-06-10"),
    Turn("S2T3", "Alice", "Rex learned to fetch the newspaper, which is hilarious.", "2023-06-10"),
]


def _build(tmp_path: Path) -> tuple[object, RunRecord]:
    store = new_store(tmp_path / "mem")
    record = RunRecord(tmp_path / "calls.jsonl")
    model = get_model("offline")

    async def go() -> None:
        for chunk in chunk_stream(CONVERSATION, max_turns=4):
            out = await manage_chunk(model, store, chunk, record=record)
            assert out.baseline and out.model == "offline"

    asyncio.run(go())
    return store, record


def _line(store: object, path: str, n: int) -> str:
    return snapshot(store)[path].split("\n")[n - 1]  # type: ignore[arg-type]


def test_curator_keeps_every_fact_and_supersedes_by_key(tmp_path: Path) -> None:
    store, record = _build(tmp_path)
    files = snapshot(store)
    # A folder per person: facts.md (a section per attribute) and a folder per topic with a file
    # per day; it was one file per person, which the searcher had to read whole (issue 20).
    days = {"alice/food": ["2023-05-01", "2023-06-10"], "alice/pets": ["2023-05-01"],
            "alice/general": ["2023-06-10"], "bob/work": ["2023-05-01", "2023-06-10"],
            "bob/family": ["2023-05-01"]}  # fmt: skip
    people = "/memories/people"
    assert set(files) == (
        {"/memories/MEMORY.md", f"{people}/MEMORY.md"}
        | {f"{people}/{p}/{f}" for p in ("alice", "bob") for f in ("MEMORY.md", "facts.md")}
        | {f"{people}/{t}/MEMORY.md" for t in days}
        | {f"{people}/{t}/{d}.md" for t, ds in days.items() for d in ds}
    )
    assert spec.validate(store).valid  # type: ignore[arg-type]
    assert check(store).ok  # type: ignore[arg-type]
    text = "\n".join(files.values())
    for turn in CONVERSATION:  # every turn is kept, verbatim, a line per sentence with its locator
        for sentence in sentences(turn.text):
            assert f"- {turn.date}: {turn.speaker}: {sentence} [{turn.locator}]" in text
    alice = files["/memories/people/alice/facts.md"]
    live = [ln for ln in alice.splitlines() if ln.startswith("- alice | preference:")]
    assert live == ["- alice | preference: tea (since 2023-06-10) [S2T1]"]
    assert "- ~~alice | preference: coffee in the morning~~ (2023-05-01 until 2023-06-10) [S1T1]" in alice
    assert alice.index("## preference\n- alice | preference: tea") < alice.index(
        "~~alice | preference: coffee"
    )
    bob = files["/memories/people/bob/facts.md"]
    assert "## home\n- bob | home: Seattle (since 2023-06-10) [S2T2]" in bob
    assert (
        "## job\n- bob | job: carpenter in Portland (since 2023-05-01) [S1T2]" in bob
    )  # "these days" trimmed
    # the person's index names the attribute sections, which is how the searcher finds them
    assert "one section per attribute: job, home" in files["/memories/people/bob/MEMORY.md"]
    assert (
        "- 2023-05-01.md: Alice on pets, 2023-05-01 (session 1)"
        in files["/memories/people/alice/pets/MEMORY.md"]
    )
    steps = [e for e in record.entries if e["kind"] == "offline_step"]
    assert len(steps) == 2 and all(e["baseline"] is True and e["model"] == "offline" for e in steps)
    assert all(e["harness"]["calls"] > 0 and e["harness"]["bytes_read"] > 0 for e in steps)
    assert {c["name"] for e in steps for c in e["calls"]} <= {"view", "create", "insert", "str_replace"}


def test_searcher_answers_the_current_value_and_cites_its_line(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    record = RunRecord(None)
    out = asyncio.run(
        answer_question(get_model("offline"), store, "What does Alice prefer to drink now?", record=record)
    )
    assert out.baseline and out.answer == "tea"
    path, n = out.citations[0].rsplit(":", 1)
    assert _line(store, path, int(n)) == "- alice | preference: tea (since 2023-06-10) [S2T1]"
    past = asyncio.run(answer_question(get_model("offline"), store, "What did Alice prefer before?"))
    p2, n2 = past.citations[0].rsplit(":", 1)
    assert "~~alice | preference: coffee" in _line(store, p2, int(n2))
    assert past.answer == "coffee in the morning (2023-05-01 until 2023-06-10)"
    dog = asyncio.run(answer_question(get_model("offline"), store, "What is the name of Alice's dog?"))
    assert "Rex" in dog.answer and dog.citations
    when = asyncio.run(
        answer_question(get_model("offline"), store, "When did Rex learn to fetch the newspaper?")
    )
    assert when.answer == "10 June 2023"
    step = record.entries[-1]
    assert step["baseline"] is True and step["answer"] == "tea" and step["citations"] == out.citations


def test_searcher_navigates_listing_index_toc_section(tmp_path: Path) -> None:
    """It navigates rather than reads: the root listing, the named person's MEMORY.md, the toc of
    the keyed-facts file the index points to, then the one section the question cues. (The old
    searcher began with a grep over the whole store and read whole files.)"""
    store, _ = _build(tmp_path)
    record = RunRecord(None)
    asyncio.run(answer_question(get_model("offline"), store, "Where does Bob live now?", record=record))
    calls = [
        (c["name"], c["args"].get("path"), c["args"].get("section_path")) for c in record.entries[-1]["calls"]
    ]
    assert calls == [
        ("view", "/memories", None),  # the root listing: names, sizes, descriptions (0 bytes read)
        ("view", "/memories/people/bob/MEMORY.md", None),  # the index of the folder the question names
        ("view", "/memories/people/bob", None),  # its listing, for the sizes of the files below it
        ("toc", "/memories/people/bob/facts.md", None),  # the index lists a `home` section
        ("section_read", "/memories/people/bob/facts.md", "# Bob: keyed facts > ## home"),
        ("grep", "/memories/people/bob", None),  # candidates from the named folder only
    ]


def test_option_chooser_picks_the_supported_option(tmp_path: Path) -> None:
    store, _ = _build(tmp_path)
    model = get_model("offline")
    out = asyncio.run(
        choose_option(model, store, "What does Alice drink these days?", ["coffee", "tea", "orange juice"])
    )
    assert out.extra["choice"] == 1 and out.answer == "tea" and out.baseline
    city = asyncio.run(
        choose_option(model, store, "Where does Bob live now?", ["Portland", "Lisbon", "Seattle"])
    )
    assert city.answer == "Seattle"


def test_keyed_fact_patterns() -> None:
    assert keyed_facts("I now prefer tea over coffee.") == [("preference", "tea")]
    assert keyed_facts("I live in Boston, near the river.") == [("home", "Boston")]
    assert keyed_facts("I'm working as a nurse at St. Mary's") == [("job", "nurse at St. Mary's")]
    assert keyed_facts("My favorite movie is Alien and I love it") == [("favorite movie", "Alien")]
    assert keyed_facts("We went hiking.") == []


def test_chunking_rule() -> None:
    turns = [Turn(f"S1T{i}", "A", "x" * 10) for i in range(1, 20)]
    assert [len(c.turns) for c in chunk_stream(turns)] == [8, 8, 3]
    long = [Turn("S1T1", "A", "y" * 1000), Turn("S1T2", "B", "y" * 1999), Turn("S1T3", "A", "y" * 2),
            Turn("S1T4", "B", "z")]  # fmt: skip
    chunks = chunk_stream(long)
    # closed before a turn would take the chunk past 3,000 characters (see memdir.stream)
    assert [c.locators for c in chunks] == [["S1T1", "S1T2"], ["S1T3", "S1T4"]] and chunks[0].chars == 2999
    assert [c.id for c in chunks] == [1, 2]


def test_answer_parser_tolerates_variations() -> None:
    fenced = parse_answer('Found it.\n```json\n{"answer": "tea", "citations": ["/memories/a.md:3-4"]}\n```')
    assert (fenced.answer, fenced.citations, fenced.parsed) == ("tea", ["/memories/a.md:3-4"], "json")
    single = parse_answer("{'Answer': 'tea', 'citations': '/memories/a.md:3; /memories/b.md > # B > ## C'}")
    assert single.answer == "tea" and single.citations == ["/memories/a.md:3", "/memories/b.md > # B > ## C"]
    lines = parse_answer("**Answer:** tea\nCitations: /memories/a.md:3-4, /memories/b.md > # X > ## Y")
    assert lines.parsed == "lines" and lines.citations == [
        "/memories/a.md:3-4",
        "/memories/b.md > # X > ## Y",
    ]
    loose = parse_answer("She drinks tea (see /memories/people/alice.md:7).")
    assert loose.parsed == "fallback" and loose.citations == ["/memories/people/alice.md:7"]
    nested = parse_answer('{"answer": "tea", "citations": [{"path": "/memories/a.md", "lines": "3-4"}]}')
    assert nested.citations == ["/memories/a.md:3-4"]


def test_ingest_and_ask_commands(tmp_path: Path) -> None:
    stream = tmp_path / "turns.jsonl"
    stream.write_text("\n".join(json.dumps(t.__dict__) for t in CONVERSATION) + "\n")
    assert load_turns(stream) == CONVERSATION
    root = tmp_path / "mem"
    runner = CliRunner()
    runner.invoke(cli, ["init", str(root)])
    res = runner.invoke(cli, ["ingest", str(root), "--model", "offline", str(stream)])
    assert res.exit_code == 0, res.output
    assert "7 turn(s) in 2 chunk(s)" in res.output and "offline" in res.output
    log = root / ".memdir" / "calls.jsonl"
    assert log.exists() and json.loads(log.read_text().splitlines()[0])["command"] == "ingest"
    res = runner.invoke(cli, ["ask", str(root), "--model", "offline", "--json", "Where does Bob live now?"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["answer"] == "Seattle" and out["baseline"] is True and out["model"] == "offline"
    assert re.fullmatch(r"/memories/people/bob/facts\.md:\d+", out["citations"][0])  # his keyed facts
    plain = runner.invoke(cli, ["ask", str(root), "--model", "offline", "What does Alice prefer?"])
    assert (
        "answer (offline baseline): tea" in plain.output
        and "cite: /memories/people/alice/facts.md:" in plain.output
    )
    script = tmp_path / "script.json"
    replies = [
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "Rex"}}]},
        '{"answer": "Rex", "citations": ["/memories/people/alice.md:9"]}',
    ]
    script.write_text(json.dumps(replies))
    res = runner.invoke(
        cli, ["ask", str(root), "--model", "scripted", "--script", str(script), "--json", "Dog?"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["answer"] == "Rex" and json.loads(res.output)["rounds"] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"speaker": "A"}\n')
    res = runner.invoke(cli, ["ingest", str(root), "--model", "offline", str(bad)])
    assert res.exit_code != 0 and "locator" in res.output


def test_the_offline_model_plays_only_the_roles_with_a_baseline(tmp_path: Path) -> None:
    """One place chooses who plays a role (agents/baselines.py): the baselines for management,
    answering and choice (the study's closed-book floor brings its own, memdir_study.roles); a
    stated refusal for every other role."""
    import pytest

    from memdir.agents import reorganize
    from memdir.agents.baselines import NO_BASELINE, has_baseline
    from memdir.errors import MemdirError
    from memdir_study.roles import NO_BASELINE as STUDY_NO_BASELINE
    from memdir_study.roles import closed_book, folder

    offline = get_model("offline")
    out = asyncio.run(closed_book(offline, "What does Alice eat?"))
    assert (out.answer, out.baseline, out.model) == ("unknown", True, "offline")
    assert all(has_baseline(r) for r in ("management", "answer", "choice"))
    store = new_store(tmp_path / "m")
    with pytest.raises(MemdirError, match=STUDY_NO_BASELINE["folder"]):
        asyncio.run(folder(offline, store))
    with pytest.raises(MemdirError, match=NO_BASELINE["reorganize"]):
        asyncio.run(reorganize(offline, store))
    assert not any(has_baseline(r) for r in NO_BASELINE)


def _curate(root: Path, turns: list[Turn], max_turns: int, fanout_cap: int = DEFAULT_FANOUT_CAP) -> object:
    """Turns through the offline curator, chunk by chunk, with the real manage tools."""
    store = new_store(root)
    for chunk in chunk_stream(turns, max_turns=max_turns):
        Curator(Harness(store, "manage"), fanout_cap=fanout_cap).integrate(chunk)  # type: ignore[arg-type]
    return store


def test_routing_keeps_a_keys_history_in_one_file_across_chunks(tmp_path: Path) -> None:
    """Design rule 3: each keyed fact is routed by (subject, attribute) alone, so after many
    chunks, with other talk between the changes, a key's whole dated history is one section of
    one file with one live line; and the same stream gives the same store."""
    homes = ["Boston", "Denver", "Austin"]
    turns = []
    for s, city in enumerate(homes, start=1):
        day = f"2023-0{s}-15"
        turns += [Turn(f"S{s}T1", "Alice", f"I moved to {city} and I love the food there.", day),
                  Turn(f"S{s}T2", "Bob", "My sister visited the museum with her kids.", day),
                  Turn(f"S{s}T3", "Alice", "I went hiking with my dog at the weekend.", day)]  # fmt: skip
    store = _curate(tmp_path / "a", turns, max_turns=1)
    files = snapshot(store)
    holding = {p for p, t in files.items() if "alice | home" in t}
    assert holding == {"/memories/people/alice/facts.md"}
    facts = files["/memories/people/alice/facts.md"]
    assert facts.count("alice | home:") == 3 and facts.count("## home") == 1
    assert "- alice | home: Austin (since 2023-03-15) [S3T1]" in facts
    assert "- ~~alice | home: Denver~~ (2023-02-15 until 2023-03-15) [S2T1]" in facts
    assert "- ~~alice | home: Boston~~ (2023-01-15 until 2023-02-15) [S1T1]" in facts
    assert check(store).ok and spec.validate(store).valid  # type: ignore[arg-type]
    again = snapshot(_curate(tmp_path / "b", turns, max_turns=1))
    assert again == files


def test_fanout_stays_under_the_cap_by_going_a_level_down(tmp_path: Path) -> None:
    """Design rule 2: a topic folder takes days while the cap leaves room, then days go into a
    year folder, then month folders; no folder passes the cap and every turn is kept once."""
    base = datetime.date(2023, 1, 2)
    days = [(base + datetime.timedelta(days=3 * i)).isoformat() for i in range(25)]
    turns = [Turn(f"S{i + 1}T1", "Alice", f"Nothing much today, number {i}.", d) for i, d in enumerate(days)]
    store = _curate(tmp_path / "m", turns, max_turns=8, fanout_cap=20)
    report = check(store, fanout_cap=20)  # type: ignore[arg-type]
    assert report.ok, report.problems
    assert spec.validate(store).valid  # type: ignore[arg-type]
    files = snapshot(store)
    topic = "/memories/people/alice/general"
    assert f"{topic}/2023-01-02.md" in files  # the first days at the top
    assert f"{topic}/2023/{days[9]}.md" in files  # then the year folder
    assert f"{topic}/2023/{days[-1][:7]}/{days[-1]}.md" in files  # then a month folder
    text = "\n".join(files.values())
    assert all(text.count(f"[{t.locator}]") == 1 for t in turns)


def test_curated_store_reads_less_per_right_answer_than_the_dump_on_a_generated_conversation(
    tmp_path: Path,
) -> None:
    """Partitioned by person, topic and day, with each changed value keyed, the curated store's
    search reads fewer bytes per right answer than the verbatim dump's, on the same questions,
    with the same searcher, and answers more of them. (Per question it may read more: since the
    offline curator keys the generated benchmark's values, the searcher reads `facts.md`, where
    the answers are; gen-s42-n10, measured: 2,195 bytes a question at correctness 47.1, against
    the dump's 1,953 at 5.4.)"""
    cfg = RunConfig(
        benchmark="generated",
        conversations=["gen-s42-n10"],
        variants=["verbatim-dump", "agent-curated"],
        builder_model="offline",
        search_model="offline",
    )
    cells = {c.variant: c for c in run_eval(cfg, tmp_path / "run", progress=False).cells}
    dump, curated = cells["verbatim-dump"], cells["agent-curated"]
    assert curated.n_questions == dump.n_questions > 0
    assert curated.correctness and dump.correctness
    right, right_dump = curated.correctness.all.mean or 0, dump.correctness.all.mean or 0
    assert right > 2 * right_dump > 0
    assert 0 < (curated.search.bytes_read or 0) / right < (dump.search.bytes_read or 0) / right_dump


def test_a_change_said_as_one_is_keyed_and_a_lower_case_word_is_no_name() -> None:
    """The offline curator keys a change stated as one ("switched my workout to", "X is my
    favorite Y now"), and a pattern asking for a name takes only a capitalized one: "started
    learning an instrument" is no language course (read on conv-43's store)."""
    from memdir.agents.offline.extract import keyed_facts

    assert keyed_facts("I switched my workout to yoga.") == [("workout", "yoga")]
    assert keyed_facts("My taste has changed: Thai is my favorite cuisine now.") == [
        ("favorite food", "Thai")
    ]
    assert keyed_facts("I sold my old car and bought a Volvo XC60.") == [("car", "Volvo XC60")]
    assert keyed_facts("Recently started learning an instrument.") == []
    assert keyed_facts("I started learning Japanese.") == [("language course", "Japanese")]


def test_a_second_liking_is_kept_beside_the_first_and_a_change_still_supersedes(tmp_path: Path) -> None:
    """REALTALK Chat_1, read on the offline store: "I prefer wide bodies" struck "a stroll in
    the park" through as a past preference, a false end date. A liking supersedes another only
    when its turn says a change ("I now prefer tea")."""
    import asyncio

    from agent_helpers import new_store
    from memdir.agents import ingest
    from memdir.models import get_model

    turns = [
        Turn("S1T1", "Elise", "Some weekends I prefer a stroll in the park.", "2024-01-05"),
        Turn("S2T1", "Elise", "I love planes but I prefer wide bodies especially.", "2024-01-15"),
        Turn("S3T1", "Elise", "Guess what, I now prefer tea over coffee.", "2024-01-20"),
    ]
    store = new_store(tmp_path / "m")
    asyncio.run(ingest(get_model("offline"), store, turns))
    facts = (tmp_path / "m" / "people" / "elise" / "facts.md").read_text()
    assert "~~elise | preference: a stroll in the park~~ (2024-01-05 until 2024-01-20)" in facts
    assert "- elise | preference: tea (since 2024-01-20) [S3T1]" in facts
    every = "\n".join(p.read_text() for p in (tmp_path / "m").rglob("*.md"))
    assert "2024-01-15: Elise | preference: wide bodies [S2T1]" in every  # beside, superseding nothing
    assert "until 2024-01-15" not in every


def test_an_attribute_the_question_names_in_full_beats_one_a_cue_word_points_at(tmp_path: Path) -> None:
    """Asked "What is Ines's favorite food now?" names the key `favorite food` word for word; `food` is
    also a cue of `diet`. The key named in full is what is asked, not the diet (a year's store,
    issue 51, answered "keto")."""
    turns = [
        Turn("S1T1", "Ines", "I've been eating keto for years.", "2025-01-05"),
        Turn("S1T2", "Zara", "Ha, that sounds like you.", "2025-01-05"),
        Turn("S2T1", "Ines", "My favorite food is Italian, no contest.", "2025-01-30"),
        Turn("S3T1", "Ines", "Peruvian is my new favorite food.", "2025-02-10"),
    ]
    store = _curate(tmp_path / "mem", turns, max_turns=2)
    out = asyncio.run(answer_question(get_model("offline"), store, "What is Ines's favorite food now?"))
    assert out.answer == "Peruvian"


def test_the_day_a_change_happens_is_not_part_of_its_value(tmp_path: Path) -> None:
    """ "I started a new job as a teacher on Monday!" keyed `teacher on Monday`, so the later
    "I'm still working as a teacher" read as a new value and struck the same job through (a
    year's store, issue 51: a restatement taken for a change)."""
    assert keyed_facts("I started a new job as a teacher on Monday!") == [("job", "teacher")]
    assert keyed_facts("We moved to Porto on Saturday, boxes everywhere.") == [("home", "Porto")]
    turns = [
        Turn("S1T1", "Leila", "I started a new job as a teacher on Monday!", "2025-11-20"),
        Turn("S2T1", "Leila", "I'm still working as a teacher.", "2025-12-22"),
    ]
    store = _curate(tmp_path / "mem", turns, max_turns=1)
    text = "\n".join(snapshot(store).values())  # type: ignore[arg-type]
    assert "- leila | job: teacher (since 2025-11-20) [S1T1]" in text and "~~leila | job" not in text


def test_a_value_restated_in_fewer_words_is_no_change(tmp_path: Path) -> None:
    """ "I mostly drive a Subaru Outback to work" keys `Subaru Outback to work`; "I still drive a
    Subaru Outback" restates it in fewer words and strikes nothing. A new value does."""
    turns = [
        Turn("S1T1", "Ines", "I mostly drive a Subaru Outback to work.", "2025-01-05"),
        Turn("S2T1", "Ines", "I still drive a Subaru Outback.", "2025-03-01"),
        Turn("S3T1", "Ines", "I traded in my car and got a Kia Niro!", "2025-05-01"),
    ]
    store = _curate(tmp_path / "mem", turns, max_turns=1)
    text = "\n".join(snapshot(store).values())  # type: ignore[arg-type]
    assert "- ines | car: Kia Niro (since 2025-05-01) [S3T1]" in text
    assert "- ~~ines | car: Subaru Outback to work~~ (2025-01-05 until 2025-05-01) [S1T1]" in text
    assert text.count("~~ines | car") == 1


def test_a_value_said_with_a_word_before_it_is_a_new_value_not_a_restatement(tmp_path: Path) -> None:
    """ "I work as a manager" then "I'm an assistant manager now": the word put before the old
    value makes another one (a restatement adds its words after: "Subaru Outback to work"), so
    the job changes; keeping "manager" live would be a false memory of the current job."""
    turns = [
        Turn("S1T1", "Ines", "I work as a manager at the library.", "2025-01-05"),
        Turn("S2T1", "Ines", "I work as an assistant manager at the library.", "2025-03-01"),
    ]
    store = _curate(tmp_path / "mem", turns, max_turns=1)
    text = "\n".join(snapshot(store).values())  # type: ignore[arg-type]
    keyed = [
        line
        for line in text.split("\n")
        if line.startswith("- ines | job") or line.startswith("- ~~ines | job")
    ]
    assert any("assistant manager" in line and not line.startswith("- ~~") for line in keyed), keyed
    assert not any(line.startswith("- ines | job: manager") for line in keyed), keyed


# LoCoMo conv-41's S2T10 (the horizon year's S9T10 on seed 4242, issue 51), its last sentence said
# twice here: the fact, John's family gives him strength, is one sentence of several.
LONG_TURN = Turn(
    "S9T10",
    "John",
    "Thanks a lot, Maria. Your help is really motivating and makes me more determined. Here's a pic "
    "of my family - they're the reason why I never give up. Their love gives me strength. Their love "
    "gives me strength. [shares a photo: a photography of a family having a picnic in the park]",
    "2025-01-13",
)


def test_a_long_turn_is_kept_one_line_per_sentence_in_the_speakers_words(tmp_path: Path) -> None:
    """One line of a long turn drowns a short fact in the turn's other words, so the line carries
    it only in part (issue 51); a line per sentence says each as said, by whom, when and where."""
    store = new_store(tmp_path / "mem")
    asyncio.run(manage_chunk(get_model("offline"), store, chunk_stream([LONG_TURN], max_turns=4)[0]))
    said = [ln for text in snapshot(store).values() for ln in text.splitlines() if "[S9T10]" in ln]
    assert said == [
        "- 2025-01-13: John: Thanks a lot, Maria. [S9T10]",
        "- 2025-01-13: John: Your help is really motivating and makes me more determined. [S9T10]",
        "- 2025-01-13: John: Here's a pic of my family - they're the reason why I never give up. [S9T10]",
        "- 2025-01-13: John: Their love gives me strength. [S9T10]",  # said twice, kept once
        "- 2025-01-13: John: [shares a photo: a photography of a family having a picnic in the park] [S9T10]",
    ]
    assert check(store).ok  # type: ignore[arg-type]
