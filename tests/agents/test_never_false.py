"""Never a false memory (docs/metrics.md, "Truth of a line"; docs/curation.md, "Truth"): the
scenarios a careful reader found in split curation's writes, each through the real validation
and filer on a real store with a scripted model at the LLM boundary, and each false line judged
by the write-quality benchmark's rules (`fact_truth`, `study.eval.writes`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agent_helpers import new_store, snapshot
from memdir.agents import ingest
from memdir.fact_dates import day_fits
from memdir.fact_truth import Line, false_reason
from memdir.models import get_model
from memdir.store.store import Store
from memdir.stream import Turn
from memdir_study.eval.writes import score, store_fact_lines

DAY = "2024-03-01"


def reply(turns: list[Turn], facts: dict[str, list[dict[str, str]]]) -> str:
    """A reply of the extraction's shape: every turn's key, the given facts under theirs."""
    from memdir.agents.split.extract import key

    return json.dumps({key(t): facts.get(t.locator, []) for t in turns})


def f(value: str, subject: str, kind: str = "fact", attribute: str = "", date: str = "") -> dict[str, str]:
    return {"value": value, "subject": subject, "kind": kind, "attribute": attribute or kind, "date": date}


def curate(tmp_path: Path, turns: list[Turn], facts: dict[str, list[dict[str, str]]]) -> tuple[Store, Any]:
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[reply(turns, facts)])
    result = asyncio.run(ingest(model, store, turns, curation="split"))
    return store, result.outputs[0].extra


def text_of(store: Store) -> str:
    return "\n".join(snapshot(store).values())


def test_a_relatives_news_is_never_filed_as_the_speakers_own(tmp_path: Path) -> None:
    turns = [
        Turn("S1T1", "Alice", "I live in Lisbon, near the river.", "2024-01-10"),
        Turn("S2T1", "Alice", "My sister Maria lives in Rome now. My mother works as a teacher.", DAY),
    ]
    store = new_store(tmp_path / "mem")
    model = get_model(
        "scripted",
        script=[
            reply(turns[:1], {"S1T1": [f("Lisbon", "Alice", "fact", "home")]}),
            reply(
                turns[1:],
                {
                    "S2T1": [
                        f("lives in Rome", "Alice", "fact", "home"),
                        f("a teacher", "Alice", "fact", "job"),
                    ]
                },
            ),
        ],
    )
    asyncio.run(ingest(model, store, turns, curation="split"))
    text = text_of(store)
    assert "- alice | home: Lisbon (since 2024-01-10) [S1T1]" in text  # still live, never struck
    assert "~~alice | home" not in text and "alice | job" not in text
    assert "Maria | fact: lives in Rome" in text or "maria | home: lives in Rome" in text
    assert "Alice's mother" in text or "alice s mother" in text
    lines = store_fact_lines(store)
    judged = score(lines, turns, speakers=["Alice", "Bob"])
    assert sum(judged.false.values()) == 0
    # the line the old schema wrote is false by the benchmark's rules
    assert false_reason(Line("alice", "home", "Rome", DAY), turns[1:], ["Alice"]) == "wrong subject"
    assert false_reason(Line("alice", "job", "a teacher", DAY), turns[1:], ["Alice"]) == "wrong subject"


def test_a_denial_is_never_stored_as_a_live_positive_value(tmp_path: Path) -> None:
    turns = [Turn("S1T1", "Alice", "I don't eat meat at all. And I'm not a teacher, I never was.", DAY)]
    store, extra = curate(
        tmp_path,
        turns,
        {"S1T1": [f("eat meat", "Alice", "preference", "diet"), f("a teacher", "Alice", "fact", "job")]},
    )
    text = text_of(store)
    assert "| diet: eat meat" not in text and "preference: eat meat" not in text
    assert "job: a teacher" not in text and "fact: a teacher" not in text
    assert "don't eat meat" in text and "fact: not a teacher [" in text  # kept with their denial
    assert extra["denials_kept"] == 2
    assert false_reason(Line("alice", "diet", "eat meat", DAY), turns, ["Alice"]) == "negated"
    assert false_reason(Line("Alice", "fact", "a teacher", DAY), turns, ["Alice"]) == "negated"
    assert false_reason(Line("Alice", "fact", "not a teacher", DAY), turns, ["Alice"]) is None


def test_cannot_do_without_affirms_and_the_offline_curator_keys_it(tmp_path: Path) -> None:
    """ "I can't start the day without a green tea" is two negations that affirm: the offline
    curator's own pattern reads a morning drink off it, and the truth rule refused it as denied,
    so it was never keyed (a year's store, issue 51). "I can't eat meat" still denies."""
    said = [Turn("S1T1", "Ines", "I can't start the day without a green tea.", DAY)]
    assert false_reason(Line("Ines", "morning drink", "green tea", DAY), said, ["Ines"]) is None
    denied = [Turn("S1T1", "Ines", "I can't eat meat, sadly.", DAY)]
    assert false_reason(Line("Ines", "diet", "meat", DAY), denied, ["Ines"]) == "negated"
    store = new_store(tmp_path / "mem")
    asyncio.run(ingest(get_model("offline"), store, said))
    assert "ines | morning drink: green tea (since" in text_of(store)


def test_word_salad_is_not_supported(tmp_path: Path) -> None:
    turns = [Turn("S1T1", "Alice", "My sister moved to Rome last year, and I stayed in Paris.", DAY)]
    store, extra = curate(tmp_path, turns, {"S1T1": [f("moved to Paris", "Alice", "fact", "home")]})
    assert "moved to Paris" not in text_of(store)
    assert extra["facts_dropped"] == {"value not in turn": 1}
    assert false_reason(Line("alice", "home", "moved to Paris", DAY), turns, ["Alice"]) == "unsupported"


def test_a_date_the_turn_does_not_name_is_never_written(tmp_path: Path) -> None:
    turns = [
        Turn("S1T1", "Alice", "I went to a pottery class, it was fun.", DAY),
        Turn("S1T2", "Alice", "I ran a charity race yesterday.", DAY),
    ]
    store, extra = curate(
        tmp_path,
        turns,
        {
            "S1T1": [f("went to a pottery class", "Alice", "event", "class", "1999-12-31")],
            "S1T2": [f("ran a charity race", "Alice", "event", "race", "2024-02-29")],
        },
    )
    text = text_of(store)
    assert "1999-12-31" not in text
    assert f"- {DAY}: Alice | event: went to a pottery class [S1T1]" in text
    assert "- 2024-02-29: Alice | event: ran a charity race [S1T2]" in text  # "yesterday"
    assert extra["dates_cleared"] == 1
    assert (
        false_reason(Line("Alice", "event", "went to a pottery class", "1999-12-31"), turns, [])
        == "wrong date"
    )
    assert day_fits("2024-02-25", "I went there last week", DAY) and not day_fits(
        "2024-01-01", "last week", DAY
    )
    assert day_fits("2024-03-10", "I'm going in March", DAY) and day_fits(
        "2023-03-05", "back in March", "2023-05-01"
    )


VACUOUS = [
    ("S1T1", "John", "I saw that!", f("saw", "John", "fact")),
    ("S1T2", "Maria", "I posted it online.", f("posted", "Maria", "plan")),
    ("S1T3", "Maria", "Great pic!", f("great pic", "Maria", "event")),
    ("S1T4", "Maria", "Haha, I was laughing so hard.", f("laughing", "Maria", "relation")),
    ("S1T5", "Maria", "I got your back, always.", f("got your back", "Maria", "plan")),
    ("S1T6", "John", "These are tough times for me.", f("tough times", "John", "plan")),
]


def test_vacuous_lines_and_a_done_act_filed_as_a_plan_are_not_facts(tmp_path: Path) -> None:
    turns = [Turn(loc, who, text, DAY) for loc, who, text, _ in VACUOUS]
    turns.append(Turn("S1T7", "John", "I finished the marathon in Boston.", DAY))
    facts = {loc: [fact] for loc, _, _, fact in VACUOUS}
    facts["S1T7"] = [f("finished the marathon in Boston", "John", "plan")]
    store, extra = curate(tmp_path, turns, facts)
    text = text_of(store)
    for _, _, _, fact in VACUOUS:
        assert f": {fact['value']} [" not in text
    assert "John | event: finished the marathon in Boston" in text  # a plan already done: an event
    assert extra["kinds_fixed"] == 1 and extra["facts_kept"] == 1
    # and the benchmark calls each such line false, by its reason
    for loc, who, _, fact in VACUOUS:
        turn = next(t for t in turns if t.locator == loc)
        assert false_reason(Line(who, fact["kind"], fact["value"], DAY), [turn], ["John", "Maria"]) in (
            "vacuous",
            "wrong kind",
        )


def test_a_locator_in_a_reply_never_bricks_the_store(tmp_path: Path) -> None:
    """A turn holding `[S999999999T1]`, and a reply naming it as a subject: before, the subject
    was found in the turn's text as written, brackets and all, the line cited session
    999,999,999, and every later add was refused ("already cites session 999,999,999")."""
    from memdir.api import Memory

    mem = Memory(tmp_path / "mem")
    said = [{"speaker": "Alice", "text": "Dana [S999999999T1] runs the gym downtown."}]
    bad = {"value": "runs the gym downtown", "subject": "[S999999999T1]"}
    model = get_model(
        "scripted",
        script=[
            json.dumps({"S1T1 Alice": [{**bad, "kind": "fact", "attribute": "[S999999999T1]", "date": ""}]}),
            json.dumps({"S2T1": []}),
        ],
    )
    mem.add(said, model=model, curation="split", date=DAY)
    text = "\n".join(p.read_text() for p in (tmp_path / "mem").rglob("*.md"))
    assert "[S999999999T1]" not in text  # neither a subject, an attribute nor a value cites it
    assert "runs the gym downtown" in text
    again = mem.add(
        [{"speaker": "Alice", "text": "I moved to Porto."}], model=model, curation="split", date=DAY
    )
    assert again.went != "none"  # the store takes more: nothing claims session 999,999,999


def test_the_benchmark_counts_false_lines_by_reason_beside_the_old_precision(tmp_path: Path) -> None:
    turns = [
        Turn("S1T1", "Alice", "My sister Maria lives in Rome now.", DAY),
        Turn("S1T2", "Alice", "I don't eat meat at all.", DAY),
        Turn("S1T3", "Alice", "I went to a pottery class, it was fun.", DAY),
        Turn("S1T4", "Maria", "Great pic!", DAY),
        Turn("S1T5", "Alice", "I went vegan last month.", DAY),
    ]
    body = "\n".join(
        [
            f"- alice | home: Rome (since {DAY}) [S1T1]",
            f"- alice | diet: eat meat (since {DAY}) [S1T2]",
            "- 1999-12-31: Alice | event: went to a pottery class [S1T3]",
            f"- {DAY}: Maria | event: great pic [S1T4]",
            f"- {DAY}: Alice | plan: went to a pottery class [S1T3]",
            f"- alice | diet: vegan (since {DAY}) [S1T5]",
            "- 2024-02-05: Alice | event: went vegan [S1T5]",
        ]
    )
    store = Store(tmp_path / "s", create=True)
    with store.step("create"):
        store.create("/memories/people/alice.md", f"---\ndescription: alice\n---\n# Alice\n\n{body}\n")
    s = score(store_fact_lines(store), turns, speakers=["Alice", "Maria"])
    assert dict(s.false) == {"wrong subject": 1, "negated": 1, "wrong date": 1, "vacuous": 1, "wrong kind": 1}
    data = s.as_json()
    assert data["precision"]["distilled"] == 1.0  # every word of every line stands in its turn
    assert data["precision_strict"]["distilled"] == round(2 / 7, 4)
    assert data["false_line_count"] == 5 and len(data["examples"]["false"]) == 5


def test_a_matching_reference_fact_names_the_subject(tmp_path: Path) -> None:
    """LoCoMo files an observation under a speaker and may open it with another's name or a
    relative: the line's subject is judged by the observation it matches, when one does."""
    from memdir_study.bench.locomo import Observation

    turns = [
        Turn("S1T7", "Caroline", "The support group has made me feel accepted.", DAY),
        Turn("S2T7", "Melanie", "My kids are so excited about summer break!", DAY),
        Turn("S3T1", "Melanie", "You have such a caring heart, Caroline.", DAY),
    ]
    gold = [
        Observation(1, "Caroline", "The support group has made Caroline feel accepted.", ("S1T7",)),
        Observation(2, "Melanie", "Melanie's kids are excited about summer break.", ("S2T7",)),
        Observation(3, "Melanie", "Caroline has a caring heart, Melanie says.", ("S3T1",)),
    ]
    body = "\n".join(
        [
            f"- {DAY}: Caroline | event: made me feel accepted [S1T7]",  # true: filed under Caroline
            f"- {DAY}: Melanie | event: made me feel accepted [S1T7]",  # not Melanie's
            f"- {DAY}: Melanie | plan: kids are so excited about summer break [S2T7]",  # her kids, named
            f"- {DAY}: Melanie | fact: such a caring heart [S3T1]",  # Caroline's, by the reference
        ]
    )
    store = Store(tmp_path / "s", create=True)
    with store.step("create"):
        store.create("/memories/people/notes.md", f"---\ndescription: notes\n---\n# Notes\n\n{body}\n")
    s = score(store_fact_lines(store), turns, gold, speakers=["Caroline", "Melanie"])
    assert dict(s.false) == {"wrong subject": 2}
    assert sorted(e.split(": ", 1)[0] for e in s.examples["false"]) == ["wrong subject"] * 2
    assert all("Melanie | event" in e or "caring heart" in e for e in s.examples["false"])


def test_what_a_speaker_says_to_the_other_is_not_theirs_and_a_turn_holds_three() -> None:
    """ "You have such a caring heart" said by Melanie is about Caroline, not Melanie: it is
    dropped as said to the other (LoCoMo files such a turn as the speaker's act, "Melanie
    praises ..."); five facts listed under one turn keep three (FACTS_PER_TURN, held in
    validation as in the schema)."""
    from memdir.agents.split.extract import FACTS_PER_TURN, parse_facts
    from memdir.agents.split.validate import check
    from memdir.stream import chunk_stream

    turns = [
        Turn("S1T1", "Caroline", "I went to a pride parade last week.", DAY),
        Turn(
            "S1T2", "Melanie", "You have such a caring heart. I ran a race, painted a lake, baked bread.", DAY
        ),
    ]
    many = [
        f(v, "Melanie", "event") for v in ("ran a race", "painted a lake", "baked bread", "ran", "a lake")
    ]
    facts, _, _ = parse_facts(reply(turns, {"S1T2": [f("a caring heart", "Melanie"), *many]}))
    out = check(chunk_stream(turns)[0], facts)
    assert [(k.subject, k.value) for k in out.kept] == [
        ("Melanie", "ran a race"),
        ("Melanie", "painted a lake"),
        ("Melanie", "baked bread"),
    ]
    assert FACTS_PER_TURN == 3 and out.dropped == {"said to the other": 1, "over cap": 2}


def test_a_value_cut_at_both_ends_is_mended_to_what_its_turn_says_and_a_wish_is_not_a_plan() -> None:
    """Read on the recorded replies of conv-50 and conv-26 (sessions 1-5): "shop and it's a step
    towards my other dream of working on" (a pronoun inside, cut before its object) is mended to
    its last clean clause, grown to its object; "opening your own car maintenance shop" said to
    Dave is his, not the speaker's; "Have a great time and learn a lot!" is a wish for the other,
    not the speaker's plan."""
    from memdir.agents.split.extract import parse_facts
    from memdir.agents.split.validate import check
    from memdir.stream import chunk_stream

    turns = [
        Turn(
            "S4T5",
            "Dave",
            "My dream was to open a shop and it's a step towards my other dream of working on classic cars.",
            DAY,
        ),
        Turn("S4T6", "Calvin", "Wow Dave! Congrats on opening your own car maintenance shop!", DAY),
        Turn("S4T7", "Melanie", "Sounds awesome! Have a great time and learn a lot.", DAY),
    ]
    facts, _, _ = parse_facts(
        reply(
            turns,
            {
                "S4T5": [f("shop and it's a step towards my other dream of working on", "Dave", "plan")],
                "S4T6": [f("opening your own car maintenance shop", "Calvin", "fact")],
                "S4T7": [f("learn a lot", "Melanie", "plan")],
            },
        )
    )
    out = check(chunk_stream(turns)[0], facts)
    assert [k.value for k in out.kept] == ["a step towards my other dream of working on classic cars"]
    assert out.dropped == {"said to the other": 2}


def test_split_keys_a_change_said_as_one_even_when_the_model_skips_it(tmp_path: Path) -> None:
    """The 1.5B model skipped "My taste has changed: Mexican is my favorite cuisine now." on the
    generated benchmark (gen-s42: 15 of 59 key-sessions omitted, the old value still live). The
    split filer runs the offline curator's keyed rules over each turn first, so the change
    strikes the old value through whatever the model said."""
    turns = [
        Turn(
            "S1T1", "Alice", "Honestly my favorite food is Ethiopian, I could eat it every day.", "2023-01-09"
        ),
        Turn("S2T1", "Alice", "My taste has changed: Mexican is my favorite cuisine now.", "2023-02-06"),
    ]
    store = new_store(tmp_path / "mem")
    model = get_model("scripted", script=[reply(turns[:1], {}), reply(turns[1:], {})])
    result = asyncio.run(ingest(model, store, turns, curation="split"))
    facts = (tmp_path / "mem" / "people" / "alice" / "facts.md").read_text()
    assert "- alice | favorite food: Mexican (since 2023-02-06) [S2T1]" in facts
    assert "- ~~alice | favorite food: Ethiopian~~ (2023-01-09 until 2023-02-06) [S1T1]" in facts
    assert [o.extra["keyed_by_rule"] for o in result.outputs] == [1, 1]


def test_a_value_says_whose_it_is_and_a_reference_it_names_fits() -> None:
    """ "my sister said all the books I might read" holds "I": the speaker's, not the sister's;
    "Max is my mother's cat" filed under the speaker names Max and the mother (a possessive's
    "'s" cut), so a reference about Max or the mother fits it."""
    from memdir.fact_truth import Actor, reference_fits

    turn = [Turn("S1T1", "Fahim", "My sister gave me a list of all the books I might actually read.", DAY)]
    assert false_reason(Line("Fahim's sister", "plan", "all the books I might actually read", DAY), turn) == (
        "wrong subject"
    )
    assert false_reason(Line("Fahim", "plan", "all the books I might actually read", DAY), turn) is None
    assert reference_fits("Deborah", "Max is my mother's cat", Actor("named", ("Max",)))
    assert reference_fits("Deborah", "Max is my mother's cat", Actor("named", ("mother",), owner="Deborah"))
    assert not reference_fits("Deborah", "a cat", Actor("named", ("Max",)))


def test_a_value_the_turn_names_as_another_attribute_is_not_filed_under_this_one(tmp_path: Path) -> None:
    """What the local model wrote on the horizon year's first month (issue 51): "my favourite
    food is Peruvian" filed as Oskar's diet, then "Peruvian is still my favorite food" as his
    live diet, which struck his keto diet through the same day; and "Makes sense to me" kept as
    a fact. The turn names what the value is: filed under another attribute, it is false."""
    turns = [
        Turn("S1T1", "Oskar", "I've been eating keto for years.", "2025-01-20"),
        Turn("S2T1", "Oskar", "Honestly my favourite food is Peruvian.", "2025-01-28"),
        Turn("S3T1", "Oskar", "Peruvian is still my favorite food. Makes sense to me.", "2025-01-30"),
    ]
    keto = f("keto", "Oskar", "fact", "diet")
    food, diet = f("Peruvian", "Oskar", "fact", "favorite food"), f("Peruvian", "Oskar", "fact", "diet")
    clause = f("Peruvian is still my favorite food", "Oskar", "fact", "diet")
    store = new_store(tmp_path / "mem")
    script = [
        reply(turns[:1], {"S1T1": [keto]}),
        reply(turns[1:2], {"S2T1": [food, diet]}),
        reply(turns[2:], {"S3T1": [clause, f("makes sense", "Oskar")]}),
    ]
    model = get_model("scripted", script=script)
    for i in range(3):
        asyncio.run(ingest(model, store, turns[i : i + 1], curation="split"))
    text = text_of(store)
    assert "- oskar | diet: keto (since 2025-01-20) [S1T1]" in text  # still live
    assert "oskar | favorite food: Peruvian" in text
    assert "diet: Peruvian" not in text and "~~oskar | diet" not in text
    assert "fact: makes sense" not in text
    for turn, fact in ((turns[1], diet), (turns[2], clause)):
        assert (
            false_reason(Line("Oskar", "diet", fact["value"], turn.date), [turn], ["Oskar"]) == "wrong kind"
        )
    day = turns[1].date or ""
    assert false_reason(Line("Oskar", "favorite food", "Peruvian", day), [turns[1]], ["Oskar"]) is None
    said = Line("Oskar", "fact", "makes sense", turns[2].date or "")
    assert false_reason(said, [turns[2]], ["Oskar"]) == "vacuous"
