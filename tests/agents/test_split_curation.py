"""Split curation (agents/split, docs/curation.md): the extraction call's protocol with a
scripted model, the validation that drops and counts what the turns do not bear out, and the
filer on a real store (index, journal, guards, `validate` and `check`)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from agent_helpers import new_store, snapshot
from memdir.agents import RunRecord, ingest, read_record
from memdir.agents.split.extract import (
    asks_only,
    instructions,
    key,
    locator_of,
    parse_facts,
    schema,
    shown,
)
from memdir.agents.split.validate import Checked, check
from memdir.analytics.integrity import check as check_store
from memdir.models import get_model
from memdir.models.scripted import ScriptedAPI
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.stream import Chunk, Turn, chunk_stream
from memdir.words import sentences

DAY1, DAY2 = "2023-05-08", "2023-06-01"
SESSION1 = [
    Turn("S1T1", "Caroline", "Hey Mel! Good to see you! How have you been?", DAY1),
    Turn("S1T2", "Melanie", "Hey Caroline! I'm swamped with the kids & work. Anything new?", DAY1),
    Turn("S1T3", "Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", DAY1),
    Turn("S1T4", "Melanie", "Wow, what happened that was so awesome?", DAY1),
    Turn(
        "S1T5", "Caroline", "I work as a counselor now. I'm keen on counseling for transgender people.", DAY1
    ),
]
SESSION2 = [Turn("S2T1", "Caroline", "Big news: I work as a teacher now.", DAY2)]


def fact(
    ev: list[str], subject: str, kind: str, attribute: str, value: str, date: str = ""
) -> dict[str, Any]:
    return {
        "evidence": ev,
        "subject": subject,
        "kind": kind,
        "attribute": attribute,
        "value": value,
        "date": date,
    }


def by_turn(facts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """A reply of the extraction's shape (`extract.schema`): each fact listed under its turn, in
    order of first appearance; an object that is not a fact is listed under the last turn."""
    out: dict[str, list[dict[str, Any]]] = {}
    last = "S1T1"
    for f in facts:
        ev = f.get("evidence")
        last = ev[0] if isinstance(ev, list) and ev else last
        out.setdefault(last, []).append({k: v for k, v in f.items() if k != "evidence"})
    return out


def checked(turns: list[Turn], facts: list[dict[str, Any]]) -> Checked:
    """`facts` proposed for the chunk of `turns`, as a reply lists them, through validation."""
    proposed, _, _ = parse_facts(json.dumps(by_turn(facts)))
    return check(chunk_stream(turns)[0], proposed)


REPLY1 = by_turn(
    [
        fact(["S1T3"], "Caroline", "event", "support group", "went to a LGBTQ support group"),
        fact(["S1T2"], "Caroline", "fact", "busy", "swamped with the kids & work"),  # first person: Melanie
        fact(["S9T9"], "Caroline", "event", "trip", "went to a LGBTQ support group"),  # not a turn here
        fact(["S1T2"], "Melanie", "fact", "job", "mother of two children and a teacher"),  # not in the turn
        fact(["S1T3"], "Caroline", "preference", "group", "it was so powerful"),  # a pronoun value
        fact(["S1T4"], "Bob", "event", "news", "happened that was so awesome"),  # only asked
        fact(["S1T5"], "Caroline", "fact", "job", "counselor"),
        fact(["S1T5"], "Caroline", "preference", "work", "I'm keen on counseling for transgender people"),
        fact(["S1T3"], "Caroline", "event", "support group", "went to a LGBTQ support group"),  # again
    ]
)
REPLY2 = by_turn([fact(["S2T1"], "Caroline", "fact", "job", "a teacher")])


def _files(store: Any) -> str:
    return "\n".join(snapshot(store).values())


def _split_run(tmp_path: Path) -> tuple[Any, Any, Any, Any]:
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[json.dumps(REPLY1), json.dumps(REPLY2)])
    record = RunRecord(tmp_path / "calls.jsonl")
    steps_before = len(Journal(store.root).steps())
    result = asyncio.run(ingest(model, store, SESSION1 + SESSION2, curation="split", record=record))
    return store, model, result, steps_before


def test_the_call_sends_the_schema_and_a_prefix_that_is_the_same_for_every_chunk(tmp_path: Path) -> None:
    _, model, result, _ = _split_run(tmp_path)
    api = model.api
    assert isinstance(api, ScriptedAPI) and len(api.requests) == 2 == len(model.calls)
    chunks = chunk_stream(SESSION1 + SESSION2)
    for (messages, tools, config), chunk in zip(api.requests, chunks, strict=True):
        assert tools == [] and config.require_schema is True
        assert config.answer_schema == schema(chunk)
        turns = config.answer_schema["properties"]
        assert list(turns) == [key(t) for t in chunk.turns] == config.answer_schema["required"]  # in order
        assert [locator_of(k) for k in turns] == list(chunk.locators)
        for t in chunk.turns:
            item = turns[key(t)]["items"]
            assert item["required"] == ["value", "subject", "kind", "attribute", "date"]
            assert item["properties"]["subject"]["enum"] == [t.speaker]  # a turn's facts are its speaker's
        assert messages[0].role == "system" and messages[0].content == instructions()
        lines = [f"[{t.locator}] {t.speaker}: {t.text}" for t in chunk.turns]  # the day once, above
        assert messages[1].content == f"Chat ({chunk.turns[0].date}):\n" + "\n".join(lines) + "\nIts JSON:"
    assert api.requests[0][0][0].content == api.requests[1][0][0].content  # the cached prefix
    # turns of more than one day (a chat export's block) keep their day on each line
    mixed = chunk_stream([SESSION1[0], Turn("S1T2", "Melanie", "Hi!", DAY2)])[0]
    assert shown(mixed) == f"Chat:\n{mixed.render()}" and f"({DAY2}) Melanie" in shown(mixed)
    assert [o.extra["model_calls"] for o in result.outputs] == [1, 1]


def test_what_the_turns_do_not_bear_out_is_dropped_counted_and_never_written(tmp_path: Path) -> None:
    store, _, result, _ = _split_run(tmp_path)
    extra = result.outputs[0].extra
    assert extra["facts_proposed"] == 9 and extra["facts_kept"] == 4
    assert extra["facts_dropped"] == {
        "duplicate": 1,
        "junk value": 1,
        "locator": 1,
        "asked": 1,
        "value not in turn": 1,
    }
    assert extra["subjects_rewritten"] == 1 and extra["values_trimmed"] == 1
    assert extra["tokens_in"] > 0 and extra["tokens_out"] > 0 and extra["seconds"] >= 0
    text = _files(store)
    for never in ("mother of two", "S9T9", "it was so powerful [", "Bob", "awesome |"):
        assert never not in text
    entries = [e for e in read_record(tmp_path / "calls.jsonl") if e["kind"] == "split_curation"]
    assert [e["chunk"] for e in entries] == [1, 2] and entries[0]["facts_dropped"]["locator"] == 1
    assert "swamped" in entries[0]["reply"] and entries[0]["model"] == "scripted"


def test_facts_are_filed_keyed_with_dated_supersede_and_events_as_distilled_lines(tmp_path: Path) -> None:
    store, _, result, _ = _split_run(tmp_path)
    people = store.root / "people"
    facts = (people / "caroline" / "facts.md").read_text()
    assert f"- caroline | job: teacher (since {DAY2}) [S2T1]" in facts  # by the keyed rules, first
    assert f"- ~~caroline | job: counselor~~ ({DAY1} until {DAY2}) [S1T5]" in facts
    # keyed kinds under a key that is not single-valued, or a value that does not fit it, are
    # distilled lines: kept, superseding nothing (agents/split/keys.py)
    assert "| work:" not in facts and not (people / "melanie" / "facts.md").exists()
    text = _files(store)
    assert f"- {DAY1}: Caroline | preference: keen on counseling for transgender people [S1T5]" in text
    assert f"- {DAY1}: Melanie | fact: swamped with the kids & work [S1T2]" in text
    assert result.outputs[0].extra["keyed_withheld"] == 2
    day_files = [p for p in (people / "caroline").rglob(f"{DAY1}.md")]
    event = f"- {DAY1}: Caroline | event: went to a LGBTQ support group [S1T3]"
    assert sum(p.read_text().count(event) for p in day_files) == 1
    # every turn is kept verbatim beside what was distilled from it, a line per sentence
    for turn in SESSION1 + SESSION2:
        for sentence in sentences(turn.text):
            assert f"{turn.speaker}: {sentence} [{turn.locator}]" in text
    assert result.outputs[1].extra["superseded"] == 1 and result.unchanged == []


def test_indexes_stay_current_and_the_store_is_valid_and_clean(tmp_path: Path) -> None:
    store, _, _, _ = _split_run(tmp_path)
    people = store.root / "people"
    index = (people / "MEMORY.md").read_text()
    assert "- caroline/: Caroline" in index and "- melanie/: Melanie" in index
    person = (people / "caroline" / "MEMORY.md").read_text()
    assert "facts.md" in person and "job" in person and "work" in person
    assert "people/" in (store.root / "MEMORY.md").read_text()
    assert spec.validate(store).violations == []
    report = check_store(store)
    assert report.problems == [] and report.warnings == []


def test_each_chunk_lands_as_one_journaled_step(tmp_path: Path) -> None:
    store, _, result, before = _split_run(tmp_path)
    steps = Journal(store.root).steps()[before:]
    assert [s.tool for s in steps] == ["split_curation", "split_curation"]
    assert [s.meta.get("chunk") for s in steps] == ["1", "2"]
    assert steps[0].meta.get("role") == "management" and steps[0].meta.get("curation") == "split"
    assert result.outputs[0].extra["writes"] > 1  # many tool calls, one step


def test_validation_rules_one_by_one() -> None:
    chunk = chunk_stream(SESSION1)[0]
    facts, malformed, error = parse_facts(json.dumps(REPLY1))
    assert len(facts) == 9 and malformed == 0 and error is None
    out = check(chunk, facts)
    by_value = {f.value: f for f in out.kept}
    assert by_value["swamped with the kids & work"].subject == "Melanie"  # rewritten to the speaker
    assert "keen on counseling for transgender people" in by_value  # "I'm" cut, subject kept
    # all content words in the turn, but not in its order: not a bag of the turn's words, only the
    # opening the turn bears out in order (fact_truth's gap rule, docs/metrics.md "Truth of a line")
    loose, _, _ = parse_facts(
        json.dumps(by_turn([fact(["S1T5"], "Caroline", "fact", "job", "counselor work")]))
    )
    assert [f.value for f in check(chunk, loose).kept] == ["counselor"]
    # a stray content word is not
    stray, _, _ = parse_facts(
        json.dumps(by_turn([fact(["S1T5"], "Caroline", "fact", "job", "senior counselor")]))
    )
    assert check(chunk, stray).dropped == {"value not in turn": 1}
    # a day the turn names ("yesterday" of 2023-05-08) is kept; an invented day, or one that is
    # not ISO, is cleared (fact_dates); a value only asked is dropped
    dated, _, _ = parse_facts(
        json.dumps(
            by_turn(
                [
                    fact(
                        ["S1T3"], "Caroline", "event", "group", "went to a LGBTQ support group", "2023-05-07"
                    ),
                    fact(["S1T5"], "Caroline", "fact", "job", "work as a counselor", "1999-12-31"),
                    fact(["S1T5"], "Caroline", "preference", "work", "keen on counseling", "yesterday"),
                    fact(["S1T4"], "Melanie", "event", "news", "what happened", ""),
                ]
            )
        )
    )
    got = check(chunk, dated)
    assert [(f.subject, f.date) for f in got.kept] == [
        ("Caroline", "2023-05-07"),
        ("Caroline", ""),
        ("Caroline", ""),
    ]
    assert got.dates_cleared == 2 and got.dropped == {"asked": 1}


def test_a_reply_cut_by_the_output_cap_keeps_its_finished_facts_and_junk_replies_say_why() -> None:
    whole = json.dumps(REPLY1)
    cut = whole[: whole.index('"counselor"') + 5]
    facts, _, error = parse_facts(cut)
    assert len(facts) == 7 and error is None  # every fact listed before the cut one
    none, _, error = parse_facts("I could not find any facts.")
    assert none == [] and error is not None and "not" in error
    shaped, malformed, _ = parse_facts(
        json.dumps(by_turn([{"value": 3}, fact(["S1T3"], "C", "event", "x", "y")]))
    )
    assert len(shaped) == 1 and malformed == 1


def test_a_reply_keyed_by_turn_openings_parses_whole_and_cut_and_a_turn_that_only_asks_gets_nothing() -> None:
    """The reply's keys are the turns' locators, speakers and first words (`extract.key`); a
    turn that asks and says nothing of its speaker has its list held empty by the schema, and
    a value is held to a short run of words."""
    t1, t2, t3 = (
        Turn("S1T3", "Nora", 'Thanks! My daughter "Mia" joined a swimming team.'),
        Turn("S1T4", "Sam", "Wow, a team? Which one?"),
        Turn("S1T5", "Sam", "Is it fun? We love swimming."),  # "we": it tells something of Sam
    )
    # from where the turn first tells of its speaker, with nothing to escape
    assert key(t1) == "S1T3 Nora: My daughter Mia joined a swimming"
    assert key(Turn("S1T6", "Sam", "Hey Nora! How are you? I love swimming.")) == "S1T6 Sam: I love swimming."
    assert key(t2) == "S1T4 Sam: Wow, a team? Which one?"  # nothing of its speaker: its opening
    assert [asks_only(t) for t in (t1, t2, t3)] == [False, True, False]
    props = schema(Chunk(1, (t1, t2, t3)))["properties"]
    assert [props[key(t)]["maxItems"] for t in (t1, t2, t3)] == [
        0 if asks_only(t) else 3 for t in (t1, t2, t3)
    ]
    pattern = re.compile(props[key(t1)]["items"]["properties"]["value"]["pattern"])
    assert pattern.fullmatch("daughter Mia joined a swimming team") and pattern.fullmatch("Mia")
    assert not pattern.fullmatch(" ".join(["word"] * 13)) and not pattern.fullmatch('say "hi"')
    told = {"value": "daughter Mia joined a swimming team", "subject": "Nora", "kind": "relation"}
    reply = json.dumps({key(t1): [{**told, "attribute": "daughter", "date": ""}], key(t2): []})
    facts, malformed, error = parse_facts(reply)
    assert [(f.evidence, f.subject, f.value) for f in facts] == [(("S1T3",), "Nora", told["value"])]
    assert malformed == 0 and error is None
    cut, _, error = parse_facts(reply[: reply.index("]")] + ', {"value": "adopt')  # cut mid-fact
    assert [f.evidence for f in cut] == [("S1T3",)] and error is None


def test_a_reply_that_does_not_parse_still_keeps_the_turns_and_says_so(tmp_path: Path) -> None:
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=["Sure! Here are the facts: Caroline went to a group."])
    result = asyncio.run(ingest(model, store, SESSION1, curation="split"))
    out = result.outputs[0]
    assert "did not parse" in out.text and out.extra["facts_kept"] == 0
    assert "Caroline: I went to a LGBTQ support group" in _files(store)


def _turns_file(path: Path, turns: list[Turn]) -> Path:
    rows = [{"locator": t.locator, "speaker": t.speaker, "text": t.text, "date": t.date} for t in turns]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_cli_curates_split_and_says_what_was_kept_and_dropped(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memdir.cli.main import cli

    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps(REPLY1), json.dumps(REPLY2)]), encoding="utf-8")
    chat = _turns_file(tmp_path / "chat.jsonl", SESSION1 + SESSION2)
    root = tmp_path / "mem"
    for folder in (root, tmp_path / "m2"):
        CliRunner().invoke(cli, ["init", str(folder)])
    args = ["ingest", str(root), "--model", "scripted", "--script", str(script)]
    res = CliRunner().invoke(cli, [*args, "--curation", "split", str(chat)])
    assert res.exit_code == 0, res.output
    assert (
        "split curation: 10 fact(s) proposed, 5 kept (2 keyed, 5 distilled lines written, 2 key(s) withheld)"
        in res.output
    )
    assert "dropped: 1 " in res.output and "value not in turn" in res.output
    assert "caroline | job: teacher" in (root / "people" / "caroline" / "facts.md").read_text()
    refused = CliRunner().invoke(
        cli,
        ["ingest", str(tmp_path / "m2"), "--model", "offline", "--curation", "split", str(chat)],
    )
    assert refused.exit_code != 0 and "split curation needs a model" in refused.output


def test_memory_add_takes_curation(tmp_path: Path) -> None:
    from memdir.api import Memory

    mem = Memory(tmp_path / "mem")
    model = get_model("scripted", script=[json.dumps(REPLY1)])
    result = mem.add(SESSION1, model=model, curation="split")
    assert not result.unchanged
    assert "caroline | job: counselor" in (tmp_path / "mem" / "people" / "caroline" / "facts.md").read_text()
    assert model.api.requests[0][1] == []  # type: ignore[attr-defined]  # no tools: the extraction call


def test_the_split_curated_variant_needs_a_model_and_agent_curated_stays_agentic(tmp_path: Path) -> None:
    import pytest

    from memdir.models.base import Model
    from memdir.models.scripted import answer
    from memdir_study.bench import load_sample
    from memdir_study.variants import VARIANTS, BuildContext, VariantUnavailable, parse_variants

    sample = load_sample("generated", "gen-s3-p2-n4-t3-a2-c1")

    def ctx(model: Any, name: str) -> BuildContext:
        return BuildContext(sample, tmp_path / name, model, RunRecord(None))

    with pytest.raises(VariantUnavailable, match="split-curated needs a model"):
        asyncio.run(VARIANTS["split-curated"].build(ctx(get_model("offline"), "off")))
    assert "split-curated" not in parse_variants("all")  # memdir's own, not the study's
    first = sample.chunks()[0].turns[3]  # "I'm saving up to buy a telescope."
    words = " ".join(first.text.split()[1:5])
    reply = by_turn([fact([first.locator], first.speaker, "event", "said", words)])
    model = get_model("scripted", script=[json.dumps(reply)] + ["{}"] * 40)
    built = asyncio.run(VARIANTS["split-curated"].build(ctx(model, "split")))
    assert built.store is not None and spec.validate(built.store).valid
    assert built.checks["split_curation"]["model_calls"] == len(sample.chunks())
    assert built.checks["split_curation"]["facts_kept"] == 1
    # the study's agent-curated variant keeps the agentic episode even for the local model
    local = Model(ScriptedAPI([answer("done")] * 40, "x"), "local/qwen2.5-coder-1.5b")
    asyncio.run(VARIANTS["agent-curated"].build(ctx(local, "agentic")))
    api = local.api
    assert isinstance(api, ScriptedAPI) and api.requests and all(tools for _, tools, _ in api.requests)


def test_a_value_copied_from_a_neighbour_is_re_cited_and_a_trailing_clause_is_cut() -> None:
    """What the 1.5B model did on conv-26's first chunk (docs/curation.md): it cited S1T4 for a
    sentence of S1T5, and copied whole sentences whose tail ("and it was so powerful") makes
    the value junk. Both are mended by rule, counted, and the result still stands in its turn."""
    chunk = chunk_stream(SESSION1)[0]
    reply = by_turn(
        [
            fact(["S1T4"], "Melanie", "fact", "job", "I work as a counselor now"),
            fact(
                ["S1T3"],
                "Caroline",
                "event",
                "group",
                "went to a LGBTQ support group yesterday and it was so powerful.",
            ),
            fact(["S1T3"], "Caroline", "event", "group", "it was so powerful"),  # no clean opening
        ]
    )
    facts, _, _ = parse_facts(json.dumps(reply))
    out = check(chunk, facts)
    assert [(f.locators, f.subject, f.value) for f in out.kept] == [
        (("S1T5",), "Caroline", "work as a counselor now"),
        (("S1T3",), "Caroline", "went to a LGBTQ support group yesterday"),
    ]
    assert out.recited == 1 and out.trimmed == 2 and out.rewritten == 1
    assert out.dropped == {"junk value": 1}


def test_a_value_opening_mid_phrase_takes_in_the_words_before_it_in_its_turn() -> None:
    turns = [
        Turn(
            "S1T1",
            "Calvin",
            "Thanks! I'm going to Japan for a few months then off to Boston! So excited.",
            DAY1,
        )
    ]
    out = checked(
        turns,
        [
            fact(["S1T1"], "Calvin", "plan", "trip", "to Japan for a few months then off to Boston!"),
            fact(["S1T1"], "Calvin", "plan", "trip", "to the park"),  # in no turn: dropped, not grown
        ],
    )
    assert [f.value for f in out.kept] == ["going to Japan for a few months then off to Boston"]
    assert out.trimmed == 1 and out.dropped == {"junk value": 1}


def test_split_files_the_user_by_name_and_never_the_assistant_as_a_person(tmp_path: Path) -> None:
    """The split filer groups people as the offline curator does (docs/conventions.md,
    "People"): the user under the name they gave, the assistant's turns beside the turn they
    answer, and a fact the model states about the assistant is dropped and counted."""
    chat = [
        Turn("S1T1", "user", "Hi, I'm Alice. I live in Lisbon.", DAY1),
        Turn("S1T2", "assistant", "Nice to meet you, Alice. I run on servers in Frankfurt.", DAY1),
    ]
    reply = by_turn(
        [
            fact(["S1T1"], "user", "fact", "home", "Lisbon"),
            fact(["S1T2"], "assistant", "fact", "home", "servers in Frankfurt"),
        ]
    )
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[json.dumps(reply)])
    result = asyncio.run(ingest(model, store, chat, curation="split"))
    paths = set(snapshot(store))
    assert not any(p.startswith("/memories/people/assistant") for p in paths), sorted(paths)
    assert not any(p.startswith("/memories/people/user/") for p in paths), sorted(paths)
    facts = snapshot(store)["/memories/people/alice/facts.md"]
    assert "alice | home: Lisbon" in facts and "Frankfurt" not in facts
    said = _files(store)
    assert "assistant: Nice to meet you, Alice." in said  # kept, as context beside the user's turn
    assert result.outputs[0].extra["assistant_facts_dropped"] == 1


def test_a_wrong_key_supersedes_nothing_and_the_fact_is_kept_as_a_distilled_line(tmp_path: Path) -> None:
    """The 1.5B model's measured misfiling (issue 32): an event named as Caroline's `job`. Keyed,
    the next real job would strike out a support-group visit. The filer withholds the key (the
    value carries no cue of a job), writes the fact as a distilled line, and counts it."""
    reply = by_turn([fact(["S1T3"], "Caroline", "fact", "job", "went to a LGBTQ support group yesterday")])
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[json.dumps(reply)])
    record = RunRecord(tmp_path / "calls.jsonl")
    result = asyncio.run(ingest(model, store, SESSION1, curation="split", record=record))
    text = _files(store)
    assert "job: went to" not in text and "job: counselor" in text  # S1T5's own words key the job
    distilled = f"- {DAY1}: Caroline | fact: went to a LGBTQ support group yesterday [S1T3]"
    assert text.count(distilled) == 1
    extra = result.outputs[0].extra
    assert extra["keyed_written"] == extra["keyed_by_rule"] == 1
    assert extra["distilled_written"] == 1 and extra["keyed_withheld"] == 1
    entry = next(e for e in read_record(tmp_path / "calls.jsonl") if e["kind"] == "split_curation")
    assert entry["keyed_withheld"] == 1
    assert "1 keyed withheld" in result.outputs[0].text


def test_a_real_job_change_still_supersedes_under_any_name_of_the_key(tmp_path: Path) -> None:
    turns = [
        Turn("S1T1", "Caroline", "I started as a nurse at the clinic.", DAY1),
        Turn("S2T1", "Caroline", "Big news, I work as a teacher now!", DAY2),
    ]
    replies = [
        by_turn([fact(["S1T1"], "Caroline", "fact", "job", "nurse")]),
        by_turn([fact(["S2T1"], "Caroline", "fact", "occupation", "a teacher")]),
    ]
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[json.dumps(r) for r in replies])
    result = asyncio.run(ingest(model, store, turns, curation="split"))
    facts = (store.root / "people" / "caroline" / "facts.md").read_text()
    assert f"- ~~caroline | job: nurse~~ ({DAY1} until {DAY2}) [S1T1]" in facts
    assert f"- caroline | job: teacher (since {DAY2}) [S2T1]" in facts  # by the keyed rules, first
    assert "occupation" not in facts
    assert [o.extra["keyed_withheld"] for o in result.outputs] == [0, 0]
    assert result.outputs[1].extra["superseded"] == 1


def test_only_a_single_valued_key_whose_value_fits_it_is_keyed() -> None:
    from memdir.agents.split.keys import keyed_attribute

    cases = [
        ("job", "counselor", "I work as a counselor now.", "job"),
        ("career", "a nurse", "I started as a nurse at the clinic.", "job"),
        ("job", "swamped with the kids & work", "I'm swamped with the kids & work. Anything new?", None),
        ("job", "went to a LGBTQ support group", "I went to a LGBTQ support group yesterday.", None),
        ("lives in", "Lisbon", "Hi, I'm Alice. I live in Lisbon.", "home"),
        ("city", "Lisbon", "I moved to Lisbon in May.", "home"),
        ("diet", "vegan", "I went vegan last year.", "diet"),
        ("major", "computer science", "I'm majoring in computer science.", "study"),
        ("favorite food", "pizza", "My favorite food is pizza.", None),  # a liking, not a diet
        ("preference", "tea", "I prefer tea.", None),  # one liking never ends another
        ("busy", "swamped with the kids", "I'm swamped with the kids.", None),  # no single-valued key
        ("home", "a LGBTQ support group", "I went to a LGBTQ support group.", None),
    ]
    got = [keyed_attribute(attr, value, text) for attr, value, text, _ in cases]
    assert got == [want for *_, want in cases]


def test_a_value_retold_in_the_third_person_or_run_on_is_taken_as_its_turn_words_it() -> None:
    """conv-26, sessions 1-5 (issue 32): the 1.5B model narrates what a speaker said of
    themselves ("took her fam camping", "Melanie ran a charity race") and runs a value on past
    its turn. Each was dropped as a pronoun value or as not in its turn; each is a true fact the
    turn bears out, so the turn's own span is kept, re-cited to the turn that has it, and
    counted. A run of fewer than four words, or a name that is not the turn's speaker, is not."""
    day = "2023-05-25"
    turns = [
        Turn(
            "S2T1",
            "Melanie",
            "Hey Caroline! I ran a charity race for mental health last Saturday – it was really rewarding.",
            day,
        ),
        Turn(
            "S2T2", "Caroline", "That charity race sounds great, Mel! I'm proud of you for taking part!", day
        ),
        Turn(
            "S2T3",
            "Melanie",
            "Actually, I just took my fam camping in the mountains last week - it was a really nice time!",
            day,
        ),
    ]
    out = checked(
        turns,
        [
            fact(
                ["S2T3"],
                "Melanie",
                "event",
                "camping",
                "took her fam camping in the mountains last week, exploring nature, roasted marshmallows",
            ),
            fact(
                ["S2T2"],
                "Caroline",
                "event",
                "race",
                "Melanie ran a charity race for mental health last Saturday",
            ),
            fact(["S2T2"], "Caroline", "event", "race", "Caroline ran a charity race for mental health"),
            fact(
                ["S2T3"], "Melanie", "event", "trip", "took her fam skiing in Norway"
            ),  # 2 words in the turn
        ],
    )
    assert [(f.locators, f.subject, f.value) for f in out.kept] == [
        (("S2T3",), "Melanie", "took my fam camping in the mountains last week"),
        (("S2T1",), "Melanie", "ran a charity race for mental health last Saturday"),
    ]
    # Caroline did not run it; "her fam skiing in Norway" stands nowhere, so "her" stays a pronoun
    assert out.respanned == 2 and out.dropped == {"value not in turn": 1, "junk value": 1}
    assert out.counts(4)["values_respanned"] == 2
    for kept in out.kept:
        assert kept.value in kept.turn.text  # the turn's own words, as written


def test_a_value_retold_in_another_tense_is_taken_as_its_turn_words_it() -> None:
    """conv-50, sessions 1-5: "I was so thrilled to restore one last year" came back as
    "restored one last year - nothing like bringing it back to life", which no turn says as
    written, so it was dropped. A word stands for another of its stem, so the turn's own span
    is kept (cut before its pronoun clause); a word of another stem still matches nothing."""
    day = "2023-05-01"
    turns = [
        Turn(
            "S4T7",
            "Dave",
            "I'm obsessed with classic cars. I was so thrilled to restore one last year - nothing "
            "like bringing it back to life!",
            day,
        ),
    ]
    out = checked(
        turns,
        [
            fact(["S4T7"], "Dave", "event", "car", "restored one last year - nothing like bringing it back"),
            fact(["S4T7"], "Dave", "event", "car", "repaired one last year in the garage"),
        ],
    )
    kept = [(f.subject, f.value) for f in out.kept]
    assert kept == [("Dave", "restore one last year - nothing like bringing")]
    assert out.respanned == 1 and out.dropped == {"value not in turn": 1}
    assert out.kept[0].value in turns[0].text


def test_a_value_that_only_names_a_speaker_is_dropped_as_who_talks_to_whom() -> None:
    """conv-26 and conv-50, sessions 1-5: 65 of the 1.5B model's 247 facts were "Melanie |
    relation: Caroline" from turns that greet or thank the other speaker. Such a value (a
    speaker's name or the start of one written as a name, "my friend" or not) is dropped and
    counted; a value that names someone and says more, or a word that only starts like a name
    ("car" and Caroline), is kept."""
    day = "2023-05-08"
    turns = [
        Turn("S1T1", "Caroline", "Thanks, Mel! My friend Dana and I adopted a dog named Oscar.", day),
        Turn("S1T2", "Melanie", "Aw, Caroline! I got a car last week, an old red one.", day),
    ]
    out = checked(
        turns,
        [
            fact(["S1T1"], "Caroline", "relation", "friend", "Mel"),
            fact(["S1T2"], "Melanie", "relation", "friend", "my friend Caroline"),
            fact(["S1T1"], "Caroline", "relation", "friend", "Dana and I adopted a dog named Oscar"),
            fact(["S1T2"], "Melanie", "event", "car", "got a car last week"),
        ],
    )
    assert out.dropped == {"speaker named": 2}
    assert [f.value for f in out.kept] == ["Dana and I adopted a dog named Oscar", "got a car last week"]


def test_small_talk_is_dropped_and_a_spoken_opening_is_cut_from_a_value() -> None:
    """conv-26 and conv-50, sessions 1-5: 13 of the kept lines were thanks, greetings and
    cheers ("Caroline | relation: thanks", "stay safe", "that's awesome"): true of the turn,
    about nobody. A value of such words alone (the speakers' names aside) is dropped as `small
    talk`; one that says more is kept. A value opening with "So", "but", "and" has it cut, and
    a first-person opening after it too."""
    day = "2023-05-25"
    turns = [
        Turn("S2T5", "Melanie", "Yeah, it's tough. So I'm carving out some me-time each day.", day),
        Turn(
            "S2T6",
            "Caroline",
            "That's awesome, Mel! Thanks, stay safe. I felt super powerful at my talk.",
            day,
        ),
    ]
    out = checked(
        turns,
        [
            fact(["S2T5"], "Melanie", "plan", "self-care", "So I'm carving out some me-time each day"),
            fact(["S2T6"], "Caroline", "preference", "mood", "That's awesome, Mel"),
            fact(["S2T6"], "Caroline", "relation", "friend", "Thanks"),
            fact(["S2T6"], "Caroline", "plan", "safety", "stay safe"),
            fact(["S2T6"], "Caroline", "event", "talk", "felt super powerful at my talk"),
        ],
    )
    assert out.dropped == {"small talk": 3}
    assert [(f.subject, f.value) for f in out.kept] == [
        ("Melanie", "carving out some me-time each day"),
        ("Caroline", "felt super powerful at my talk"),
    ]
    assert out.trimmed == 1
