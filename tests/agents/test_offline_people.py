"""The offline curator writes only what it can stand behind, and files people as people (issue 32):
no junk keyed value, none superseding a true one, abbreviations kept inside values, the user
under their name, the assistant never a person; and the offline searcher answers the obvious
question about them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agent_helpers import new_store, snapshot
from memdir.agents.offline import Curator, keyed_facts
from memdir.agents.offline.speakers import introduced_name
from memdir.api.memory import Memory
from memdir.cli.main import cli
from memdir.conventions import parse_keyed
from memdir.fact_quality import junk_reason
from memdir.stream import Chunk, Turn
from memdir.tools.profiles import Harness
from memdir.words import sentences

PEOPLE = "/memories/people"
DAY = "2024-03-01"
ALICE_CHAT = [
    {"role": "user", "content": "Hi, I'm Alice."},
    {"role": "assistant", "content": "Nice to meet you, Alice."},
    {"role": "user", "content": "I went vegan last month."},
    {"role": "assistant", "content": "Good for you! Eating vegan takes planning."},
]


def _curate(tmp_path: Path, *chunks: list[Turn]) -> dict[str, str]:
    store = new_store(tmp_path / "mem")
    for i, turns in enumerate(chunks, start=1):
        Curator(Harness(store, "manage")).integrate(Chunk(i, tuple(turns)))
    return snapshot(store)


def _keyed(files: dict[str, str]) -> list[str]:
    return [ln for path, text in files.items() for ln in text.split("\n") if parse_keyed(path, 0, ln)]


def _folders(files: dict[str, str]) -> set[str]:
    return {p.split("/")[3] for p in files if p.startswith(f"{PEOPLE}/") and p.count("/") > 3}


# -- keyed values ------------------------------------------------------------------------------


def test_pronoun_demonstrative_and_fragment_values_are_refused() -> None:
    # the REALTALK values, each once filed as a preference superseding the last
    for said in (
        "I now prefer it.",
        "Honestly I prefer this photo of the harbour.",
        "I prefer a lot about them, really.",
        "I prefer how it shows the togetherness.",
        "I live in the city now.",  # an anaphoric "the city": which?
        "I prefer the plot, to be honest.",
    ):
        assert keyed_facts(said) == [], said
    assert junk_reason("the plot") == "anaphoric" and junk_reason("the Knicks") is None
    assert junk_reason("the message it sends") == "pronoun"
    assert junk_reason("bothhh") == "stopwords only"  # an elongation is the word it stretches
    # a liking is not a keyed fact: liking tea does not end liking running
    assert keyed_facts("I love running.") == [] and keyed_facts("I really enjoy tea") == []


def test_a_value_is_not_cut_at_an_abbreviation() -> None:
    assert keyed_facts("I now prefer Dr. Costa, she listens.") == [("preference", "Dr. Costa")]
    assert keyed_facts("I work as a nurse at St. Mary's now.") == [("job", "nurse at St. Mary's")]
    assert keyed_facts("I live in St. Louis. It is cold.") == [("home", "St. Louis")]
    assert sentences("Ask Mr. J. K. Smith, e.g. today. I said no. Fine") == [
        "Ask Mr. J. K. Smith, e.g. today.",
        "I said no.",
        "Fine",
    ]


def test_a_value_ends_at_its_clause_and_diet_changes_are_keyed() -> None:
    assert keyed_facts("I went vegan last month") == [("diet", "vegan")]
    assert keyed_facts("I've stopped eating meat since May") == [("diet", "no meat")]
    assert keyed_facts("I recently became vegetarian!") == [("diet", "vegetarian")]
    assert keyed_facts("So I started a new job as a Financial Analyst last week - it's hard") == [
        ("job", "Financial Analyst")
    ]
    assert keyed_facts("I'm studying business finance Kevin") == [("study", "business finance")]  # addressed
    assert keyed_facts("I'm majoring in Computer Science") == [("study", "Computer Science")]
    assert keyed_facts("Thanks! My goal is to give kids a loving home.") == [
        ("goal", "give kids a loving home")
    ]
    assert keyed_facts("My dream is to create a safe and loving home for these kids.") == []  # cut inside
    assert keyed_facts("lol my aim is okay today") == []  # a goal is "to" do something
    assert keyed_facts("If I moved to Paris I would be happy") == []  # supposed, not said
    assert keyed_facts("Do I prefer tea?") == []


def test_a_junk_value_never_supersedes_a_live_one(tmp_path: Path) -> None:
    files = _curate(
        tmp_path,
        [Turn("S1T1", "Fahim", "I now prefer tea over coffee.", DAY)],
        [Turn("S2T1", "Fahim", "I now prefer it too.", "2024-03-02")],
        [Turn("S3T1", "Fahim", "I now prefer this photo of the harbour.", "2024-03-03")],
    )
    assert _keyed(files) == [f"- fahim | preference: tea (since {DAY}) [S1T1]"]
    text = "\n".join(files.values())
    assert "Fahim: I now prefer it too. [S2T1]" in text  # the turn itself is kept verbatim
    # the filer refuses a junk value whoever extracted it (split curation files through it too)
    store = new_store(tmp_path / "other")
    curator = Curator(Harness(store, "manage"))
    curator.open_roots()
    curator.file_keyed("Ines", "preference", "this photo", Turn("S1T1", "Ines", "x", DAY))
    assert curator.result.keyed_refused == 1 and not _keyed(snapshot(store))


# -- people ------------------------------------------------------------------------------------


def test_the_user_is_named_by_a_self_introduction_across_chunks(tmp_path: Path) -> None:
    files = _curate(
        tmp_path,
        [Turn("S1T1", "user", "I'm tired. Long day at work.", DAY)],  # "tired" is no name
        [
            Turn("S2T1", "user", "Hi, I'm Alice, by the way.", DAY),
            Turn("S2T2", "assistant", "Nice to meet you, Alice.", DAY),
        ],
        [Turn("S3T1", "user", "I live in Boston.", "2024-03-05")],  # a later chunk: still Alice
    )
    assert _folders(files) == {"user", "alice"}
    index = files[f"{PEOPLE}/MEMORY.md"]
    assert "- alice/: Alice (the user)" in index
    # the earlier chunk stays in user/, and the index says whose it is
    assert "- user/: the user before they gave their name: Alice (alice/)" in index
    assert _keyed(files) == ["- alice | home: Boston (since 2024-03-05) [S3T1]"]
    assert "Alice: Hi, I'm Alice, by the way. [S2T1]" in files[f"{PEOPLE}/alice/general/{DAY}.md"]
    assert introduced_name("I'm tired") is None and introduced_name("I'm American.") is None
    assert introduced_name("my name is Bob Smith and I cook") == "Bob Smith"
    assert introduced_name("call me Ishmael.") == "Ishmael" and introduced_name("Dana here!") == "Dana"


def test_the_assistant_is_never_a_person(tmp_path: Path) -> None:
    files = _curate(
        tmp_path,
        [
            Turn("S1T1", "Ravi", "I moved to Lisbon last year.", DAY),
            Turn("S1T2", "Assistant", "I live in the cloud; I now prefer tea, I work as a helper.", DAY),
        ],
    )
    assert _folders(files) == {"ravi"}
    assert _keyed(files) == [f"- ravi | home: Lisbon (since {DAY}) [S1T1]"]
    # kept as context beside the turn it answers, marked as the assistant's
    day = files[f"{PEOPLE}/ravi/home/{DAY}.md"]
    assert day.index("Ravi: I moved to Lisbon") < day.index("Assistant: I live in the cloud")


def test_a_message_name_names_the_user_and_the_assistant_stays_context(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    mem.add(
        [
            {"role": "user", "name": "Ines", "content": "I work as a nurse at St. Mary's."},
            {"role": "assistant", "content": "That sounds demanding, Ines."},
        ],
        date=DAY,
    )
    people = {p.name for p in (tmp_path / "mem" / "people").iterdir() if p.is_dir()}
    assert people == {"ines"}
    facts = (tmp_path / "mem" / "people" / "ines" / "facts.md").read_text(encoding="utf-8")
    assert f"- ines | job: nurse at St. Mary's (since {DAY}) [S1T1]" in facts


# -- the obvious question ----------------------------------------------------------------------


def test_memory_ask_offline_answers_what_alice_eats_with_the_vegan_fact(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    mem.add(ALICE_CHAT, date=DAY)
    answer = mem.ask("What does Alice eat now?")
    assert answer.answer == "vegan"
    (cited,) = answer.citations
    assert cited.path == f"{PEOPLE}/alice/facts.md" and cited.found
    line = (tmp_path / "mem" / "people" / "alice" / "facts.md").read_text().split("\n")[cited.start_line - 1]
    assert line == f"- alice | diet: vegan (since {DAY}) [S1T3]"


def test_an_assistant_line_is_not_the_answer_when_a_person_line_matches(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    mem.add(
        [
            {"role": "user", "content": "Hi, I'm Alice. I adopted a kitten named Miso."},
            {
                "role": "assistant",
                "content": "Miso is a lovely name, Alice! What name did your kitten have before?",
            },
        ],
        date=DAY,
    )
    answer = mem.ask("What is the name of Alice's kitten?")
    assert "Miso" in answer.answer and "lovely" not in answer.answer
    (cited,) = answer.citations
    text = (tmp_path / "mem" / cited.path.removeprefix("/memories/")).read_text().split("\n")
    assert text[cited.start_line - 1] == f"- {DAY}: Alice: I adopted a kitten named Miso. [S1T1]"


def test_cli_ingest_then_ask_offline_answers_vegan(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{**m, "date": DAY} for m in ALICE_CHAT]), encoding="utf-8")
    root = tmp_path / "mem"
    runner = CliRunner()
    runner.invoke(cli, ["init", str(root)])
    res = runner.invoke(cli, ["ingest", "--model", "offline", "--root", str(root), str(chat)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["ask", "--model", "offline", "--root", str(root), "What does Alice eat now?"])
    assert res.exit_code == 0, res.output
    assert "vegan" in res.output and "/memories/people/alice/facts.md:" in res.output
    assert "Nice to meet you" not in res.output
    assert not (root / "people" / "assistant").exists() and not (root / "people" / "user").exists()


def test_the_searcher_reads_the_named_persons_study_section(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    mem.add(
        [
            {"speaker": "Emi", "text": "I'm majoring in Psychology at UCLA."},
            {"speaker": "Elise", "text": "Emi told me she studies hard, harder than me in chemistry."},
        ],
        date=DAY,
    )
    answer = mem.ask("What does Emi study?")
    assert answer.answer == "Psychology at UCLA"
    assert answer.citations[0].path == f"{PEOPLE}/emi/facts.md"


def test_a_persons_own_line_beats_a_line_that_mentions_them(tmp_path: Path) -> None:
    """A store with no person folders (a dump): the named person's line wins a tie with a line of
    someone else naming them."""
    mem = Memory(tmp_path / "mem")
    notes = (
        "---\nname: notes\ndescription: what was said\n---\n# Notes\n"
        f"- {DAY}: Bob: Alice adopted a puppy? Alice never tells me about pets. [S1T1]\n"
        f"- {DAY}: Alice: I adopted a puppy named Rex. [S1T2]\n"
    )
    assert not mem.call("create", {"path": "/memories/notes.md", "file_text": notes}).is_error
    answer = mem.ask("What did Alice adopt?")
    assert answer.answer == "I adopted a puppy named Rex."
    assert answer.citations[0].text == "/memories/notes.md:7"


def test_a_move_in_a_month_is_filed_as_home_and_an_index_line_is_never_the_answer(tmp_path: Path) -> None:
    """Met on a first walk-through: "I just moved to Lisbon in May" kept no home ("May" read as the
    modal, a cut fragment), and "Where does the user live?" was answered with the people index's
    entry `maya/: Maya (the user)`."""
    mem = Memory(tmp_path / "mem")
    mem.add(
        [{"role": "user", "content": "Hi, I'm Maya. I just moved to Lisbon in May and I'm vegetarian."}],
        date=DAY,
    )
    facts = (tmp_path / "mem" / "people" / "maya" / "facts.md").read_text(encoding="utf-8")
    assert f"- maya | home: Lisbon (since {DAY}) [S1T1]" in facts
    assert junk_reason("Lisbon in May") is None and junk_reason("Lisbon in may") == "fragment"
    answer = mem.ask("Where does Maya live?")
    assert answer.answer == "Lisbon" and answer.citations[0].path == f"{PEOPLE}/maya/facts.md"
    for question in ("Where does the user live?", "Who is the user?"):
        assert all(not c.path.endswith("/MEMORY.md") for c in mem.ask(question).citations), question
