"""The skill chain with model-backed roles (scripted at the LLM boundary) over real ALFWorld
games, and the offline guidance synthesizer: what each role sees, what it may write, and
what the run folder accounts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memdir.agents.record import RunRecord, read_record
from memdir.models import ChatMessage, get_model, price_card
from memdir.models.scripted import answer, call
from memdir.tools.wiring import open_store
from memdir_study.bench.alfworld import load_games
from memdir_study.skills.guidance import synthesize
from memdir_study.skills.hints import read_hints
from memdir_study.skills.retrieve import Doc
from memdir_study.skills.variants import Roles

SKILL = (
    "---\nname: heat\ndescription: Procedure (skill): heat an object\nmetadata:\n  type: skill\n"
    "  family: heat\n---\n# heat tasks\n\n## Procedure\n1. take {obj} from {place}\n"
    "2. heat {obj} with microwave 1\n3. put {obj} in/on {target}\n\n## Where objects were found\n"
    "- apple: found in countertop 2 (room aaaa000001) [E3]\n"
)
NOTE = (
    "---\nname: apple\ndescription: Note: where apple objects were seen\nmetadata:\n  type: note\n"
    "  object: apple\n---\n# apple\n\n## Sightings\n- apple: seen in countertop 2 (room aaaa000001) [E3]\n"
    "- apple: seen in countertop 2 (room aaaa000001) [E7]\n- apple: seen in fridge 1 (room bbbb000002) [E9]\n"
    "- bread: seen in countertop 1 (room aaaa000001) [E9]\n"
)


def test_offline_guidance_substitutes_the_task_and_keeps_the_evidence() -> None:
    docs = [Doc("/memories/skills/heat.md", SKILL), Doc("/memories/notes/apple.md", NOTE)]
    g = synthesize("heat some apple and put it in garbagecan.", "heat", docs)
    assert "1. take apple from where the apple is" in g.text and "3. put apple in/on garbagecan" in g.text
    assert "- apple: seen in countertop 2 (room aaaa000001) x2 [E3] [E7]" in g.text and "bread" not in g.text
    assert g.cited == ["/memories/skills/heat.md", "/memories/notes/apple.md"]
    # The executor reads the same evidence from the guidance as from the entries themselves.
    raw = read_hints([(d.path, d.text) for d in docs], "aaaa000001", {"apple"})
    via = read_hints([("guidance", g.text)], "aaaa000001", {"apple"})
    assert raw.places["apple"] == via.places["apple"]
    assert synthesize("cool some lettuce and put it in fridge.", "cool", docs).text.startswith(
        "Nothing in memory"
    )


alfworld = pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")

from memdir_study.bench.alfworld_env import AlfworldEnv  # noqa: E402
from memdir_study.skills.chain import run_chains  # noqa: E402
from memdir_study.skills.policy import OfflinePolicy  # noqa: E402

BY_ID = {g.id: g for g in load_games()}
PLACE = BY_ID["pick_and_place_simple-ToiletPaper-None-ToiletPaperHanger-406/trial_T20190908_122858_883968"]
KEYCHAIN = BY_ID["look_at_obj_in_light-KeyChain-None-DeskLamp-327/trial_T20190906_202601_548273"]
PLACE_SKILL = (
    "---\nname: place\ndescription: Procedure (skill): put an object in or on a receptacle\nmetadata:\n"
    "  type: skill\n---\n# Place\n1. Find the object, take it, go to the target, put it in/on. [E1]\n"
)


def winning_actions(game: object) -> list[str]:
    with AlfworldEnv(game) as env:  # type: ignore[arg-type]
        ep = OfflinePolicy().run(env)
    assert ep.won
    return [a for a, _ in ep.steps]


@pytest.mark.slow
def test_model_roles_guide_play_and_curate_a_chain(tmp_path: Path) -> None:
    first, second = winning_actions(PLACE), winning_actions(KEYCHAIN)
    prompts: list[list[ChatMessage]] = []

    def guided(messages: list[ChatMessage]) -> str:
        prompts.append(list(messages))
        return second[0]

    guide = {
        "answer": "Take the keychain to the desklamp and switch it on.",
        "citations": ["/memories/skills/place.md"],
    }
    executor = get_model(
        "scripted",
        script=[
            '{"answer": "Nothing in memory applies yet.", "citations": []}',  # task 1: GS over an empty store
            *first,
            call("view", path="/memories/skills/place.md"),  # task 2: GS reads the skill, then writes
            json.dumps(guide),
            guided,
            *second[1:],
        ],
    )
    curator = get_model(
        "scripted/curator",
        script=[
            call("create", path="/memories/skills/place.md", file_text=PLACE_SKILL),
            answer("created the place procedure"),
            answer("nothing new"),
        ],
    )
    out = tmp_path / "run"
    record = RunRecord(out / "record.jsonl")
    rows = run_chains(
        out, ["curated-skills-mem-gs"], model=executor, roles=Roles(curator, executor, record),
        price_card=price_card("gpt-5.4-mini"), games=[PLACE, KEYCHAIN],
    )  # fmt: skip
    assert [r["success"] for r in rows] == [True, True] and [r["model"] for r in rows] == ["scripted"] * 2
    assert rows[1]["served"] == ["/memories/skills/place.md"] and rows[0]["served"] == []
    # The guidance is in the executor's system prompt; the admissible actions are not listed (the
    # paper's setting; --show-admissible lists them), the system prompt gives the command forms.
    system = prompts[0][0].content
    assert guide["answer"] in system and "Task: " + rows[1]["task"] in prompts[0][1].content
    assert "Admissible actions: " not in prompts[0][1].content and "`go to cabinet 1`" in system
    # Deployment = guidance + execution calls; build = the curator's calls; both priced.
    assert rows[0]["deploy_usage"]["calls"] == 1 + len(first) and rows[1]["deploy_usage"]["calls"] == 2 + len(
        second
    )
    assert rows[0]["build_usage"]["calls"] == 2 and rows[1]["build_usage"]["calls"] == 1
    assert all(r["deploy_cost_usd"] > 0 and r["build_cost_usd"] > 0 for r in rows)
    store = open_store(out / "stores" / "curated-skills-mem-gs" / "chain-1")
    assert store.read_text("/memories/skills/place.md") == PLACE_SKILL
    kinds = [(e["kind"], e.get("role")) for e in read_record(out / "record.jsonl")]
    assert ("model_call", "execution") in kinds and ("episode", "guidance") in kinds
    assert ("episode", "management_skills") in kinds
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["curator_model"] == "scripted/curator" and manifest["price_card"] == "gpt-5.4-mini"


def test_a_model_curator_cannot_put_a_failed_attempt_into_a_procedure(tmp_path: Path) -> None:
    executor = get_model("scripted", script=["look", "inventory"])
    refusals: list[str] = []

    def after_refusal(messages: list[ChatMessage]) -> object:
        refusals.append(messages[-1].content)
        note = PLACE_SKILL.replace("type: skill", "type: note").replace("name: place", "name: hanger")
        return call("create", path="/memories/notes/hanger.md", file_text=note)

    curator = get_model(
        "scripted",
        script=[
            call("create", path="/memories/skills/place.md", file_text=PLACE_SKILL),
            after_refusal,
            answer("kept a note"),
        ],
    )
    out = tmp_path / "run"
    rows = run_chains(
        out, ["curated-skills-mem"], model=executor, roles=Roles(curator=curator),
        price_card=price_card("gpt-5.4-mini"), games=[PLACE], step_cap=2,
    )  # fmt: skip
    assert rows[0]["success"] is False and rows[0]["steps"] == 2
    assert "only a successful attempt may create or extend a procedure" in refusals[0]
    store = open_store(out / "stores" / "curated-skills-mem" / "chain-1")
    assert not store.exists("/memories/skills/place.md") and store.exists("/memories/notes/hanger.md")


def test_a_model_run_needs_a_price_card(tmp_path: Path) -> None:
    from memdir.errors import MemdirError

    with pytest.raises(MemdirError, match="price card"):
        run_chains(tmp_path / "r", ["no-store"], model=get_model("scripted", script=[]), games=[PLACE])


@pytest.mark.slow
def test_a_cell_whose_model_fails_is_aborted_whole_and_the_others_go_on(tmp_path: Path) -> None:
    from memdir_study.skills.report import write_report

    first, second = winning_actions(PLACE), winning_actions(KEYCHAIN)
    # Lockstep: no-store plays task 1, then episode-log's first call fails for good.
    executor = get_model("scripted", script=[*first, RuntimeError("provider down"), *second])
    out = tmp_path / "run"
    rows = run_chains(
        out, ["no-store", "episode-log"], model=executor, price_card=price_card("gpt-5.4-mini"),
        games=[PLACE, KEYCHAIN],
    )  # fmt: skip
    assert [(r["variant"], r["index"]) for r in rows] == [("no-store", 1), ("no-store", 2)]
    cells = write_report(out)
    summary = json.loads((out / "summary.json").read_text())
    assert [c["variant"] for c in cells] == ["no-store"] and cells[0]["success"] == 1.0
    assert [(a["variant"], a["index"]) for a in summary["aborted"]] == [("episode-log", 1)]
    assert "provider down" in summary["aborted"][0]["error"]
    assert "## Aborted cells" in (out / "report.md").read_text()


@pytest.mark.slow
def test_a_model_search_agent_chooses_the_entries_served_whole(tmp_path: Path) -> None:
    first, second = winning_actions(PLACE), winning_actions(KEYCHAIN)
    prompts: list[str] = []

    def choose(messages: list[ChatMessage]) -> str:
        prompts.append(messages[0].content)
        cites = ["/memories/skills/place.md:1-9", "/memories/skills/MEMORY.md", "/memories/nope.md"]
        return json.dumps({"answer": "the place procedure", "citations": cites})

    executor = get_model(
        "scripted", script=['{"answer": "empty store", "citations": []}', *first, choose, *second]
    )
    out = tmp_path / "run"
    rows = run_chains(
        out, ["curated-skills-mem"], model=executor, roles=Roles(searcher=executor),
        price_card=price_card("gpt-5.4-mini"), games=[PLACE, KEYCHAIN],
    )  # fmt: skip
    assert [r["served"] for r in rows] == [[], ["/memories/skills/place.md"]]  # indexes, ghosts dropped
    assert "Strict serving" in prompts[0] and "at most 6" in prompts[0]
    store = open_store(out / "stores" / "curated-skills-mem" / "chain-1")
    assert rows[1]["served_tokens"] > 0 and store.exists("/memories/skills/place.md")
    assert rows[1]["deploy_usage"]["calls"] == 1 + len(second)


NO_SANDBOX = __import__("memdir.tools.sandbox", fromlist=["_probe"])._probe()


@pytest.mark.skipif(NO_SANDBOX is not None, reason=f"no confining sandbox here: {NO_SANDBOX}")
def test_a_shell_search_agent_cannot_change_the_store(tmp_path: Path) -> None:
    import asyncio

    from memdir.store import spec
    from memdir_study.skills.serving import select

    store = open_store(tmp_path / "mem", create=True)
    spec.init(store)
    with store.step("seed"):  # one entry: an empty store is served without asking the model
        store.create("/memories/fridge.md", "---\nname: fridge\ndescription: where the fridge is\n---\nx\n")
    before = sorted(p.name for p in (tmp_path / "mem").iterdir())
    seen: list[str] = []

    def after(messages: list[ChatMessage]) -> str:
        seen.append(messages[-1].content)  # the bash result, as the model saw it
        return '{"answer": "nothing", "citations": ["/memories/planted.md"]}'

    command = "echo '# x' > /memories/planted.md && rm -f /memories/MEMORY.md && ls /memories"
    model = get_model("scripted", script=[call("bash", command=command), after])
    task = "put a apple in fridge."
    docs, usage = asyncio.run(
        select(model, store, task, strict=True, k=3, variant="v", index=1, record=None, profile="shell")
    )
    assert "planted.md" in seen[0] and "MEMORY.md" not in seen[0]  # the command did write, in the copy
    assert docs == [] and usage.calls == 2
    assert sorted(p.name for p in (tmp_path / "mem").iterdir()) == before
