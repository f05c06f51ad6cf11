"""ALFWorld skill chains on the real environment: a handful of small (non-kitchen) games."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.store import frontmatter, spec
from memdir.store.journal import Journal
from memdir.tools.wiring import open_store
from memdir_study.bench.alfworld import (
    FAMILIES,
    FAMILY_ORDER,
    Game,
    chains,
    full_chain,
    load_games,
    parse_goal,
    three_chains,
)
from memdir_study.skills.hints import read_hints

GAMES = load_games()
BY_ID = {g.id: g for g in GAMES}
PLACE = BY_ID["pick_and_place_simple-ToiletPaper-None-ToiletPaperHanger-406/trial_T20190908_122858_883968"]
LOOK = BY_ID["look_at_obj_in_light-Bowl-None-DeskLamp-316/trial_T20190908_230702_962704"]
CLEAN = BY_ID["pick_clean_then_place_in_recep-DishSponge-None-Cart-401/trial_T20190907_024634_972453"]
KEYCHAIN = BY_ID["look_at_obj_in_light-KeyChain-None-DeskLamp-327/trial_T20190906_202601_548273"]


def task_text(game: Game) -> str:
    """The task sentence, read from the game's own grammar (no environment needed)."""
    grammar = json.loads(game.path.read_text())["grammar"]
    m = re.search(r'"task":\s*\[\s*\{\s*"rhs":\s*"([^"]*)"', grammar)
    assert m, game.id
    return m.group(1)


# -- data, families, orders ---------------------------------------------------------------
def test_manifest_has_the_140_games_in_six_families() -> None:
    counts = Counter(g.family for g in GAMES)
    assert len(GAMES) == 140 and len({g.id for g in GAMES}) == 140
    assert counts == {"place": 35, "two-object": 24, "look": 13, "clean": 27, "heat": 16, "cool": 25}
    assert all(g.path.is_file() for g in GAMES)


def test_goal_parser_agrees_with_the_games_own_parameters() -> None:
    for g in GAMES:
        params = json.loads((g.path.parent / "traj_data.json").read_text())["pddl_params"]
        goal = parse_goal(task_text(g), g.family)
        assert goal.obj == params["object_target"].lower(), g.id
        if g.family == "look":
            assert goal.lamp == params["toggle_target"].lower(), g.id
        else:
            assert goal.target == params["parent_target"].lower(), g.id
    with pytest.raises(MemdirError, match="cannot read"):
        parse_goal("juggle three apples.", "place")


def test_full_chain_is_fixed_complete_and_evenly_interleaved() -> None:
    chain = full_chain(GAMES)
    assert chain == full_chain(list(reversed(GAMES)))  # fixed: independent of the input order
    assert sorted(g.id for g in chain) == sorted(g.id for g in GAMES)
    assert {g.family for g in chain[:13]} == set(FAMILY_ORDER)  # every family in the first 10%
    for fam, n in Counter(g.family for g in GAMES).items():
        pos = [i for i, g in enumerate(chain) if g.family == fam]
        gaps = [b - a for a, b in zip([-1, *pos], [*pos, len(chain)], strict=True)]
        assert max(gaps) <= 1.5 * 140 / n + 1, fam
    assert full_chain(GAMES, seed=7) != chain


def test_three_chains_partition_the_full_chain() -> None:
    three = three_chains(GAMES)
    assert [len(c) for c in three] == [47, 47, 46]
    assert sorted(g.id for c in three for g in c) == sorted(g.id for g in GAMES)
    assert [len(c) for c in chains(GAMES, "three", 5)] == [5, 5, 5]
    with pytest.raises(MemdirError, match="unknown protocol"):
        chains(GAMES, "four")


def test_hints_trust_instances_only_in_the_same_room() -> None:
    doc = "- Room: aaaa\n1. > take mug 1 from cabinet 3\n   You pick up the mug 1 from the cabinet 3.\n"
    fact = "- mug: found in shelf 2 (room bbbb) [E4]\n"
    same = read_hints([("/memories/e.md", doc), ("/memories/f.md", fact)], "aaaa", {"mug"})
    assert same.ranked("mug", ["cabinet 1", "cabinet 3", "shelf 1", "shelf 2"]) == [
        "cabinet 3",
        "shelf 1",
        "shelf 2",
    ]
    other = read_hints([("/memories/e.md", doc)], "cccc", {"mug"})
    assert other.ranked("mug", ["cabinet 1", "cabinet 3"]) == ["cabinet 1", "cabinet 3"]
    assert not read_hints([("/memories/e.md", doc)], "aaaa", {"apple"})


def test_grep_retrieval_ranks_whole_entries_by_the_task_words(tmp_path: Path) -> None:
    from memdir.tools.profiles import Harness
    from memdir_study.skills.retrieve import grep_retrieve

    store = open_store(tmp_path / "mem", create=True)
    spec.init(store)
    manage = Harness(store, "manage", role="test")
    bodies = {
        "e001-heat-apple": "heat some apple and put it in diningtable. take apple 1 from fridge 1",
        "e002-cool-mug": "cool some mug and put it in cabinet.",
        "e003-place-apple": "put an apple in fridge.",
    }
    for name, body in bodies.items():
        text = frontmatter.dump(name, f"episode {name}", {"type": "episode"}) + body + "\n"
        manage.call_or_raise("create", {"path": f"/memories/episodes/{name}.md", "file_text": text})
    manage.call_or_raise("create", {"path": "/memories/episodes/MEMORY.md", "file_text": "- heat apple\n"})
    search = Harness(store, "search", role="test")
    docs = grep_retrieve(search, "heat some apple and put it in diningtable.", 2)
    assert [d.path for d in docs] == [
        "/memories/episodes/e001-heat-apple.md",
        "/memories/episodes/e003-place-apple.md",
    ]
    assert docs[0].text.startswith("---\nname: e001-heat-apple") and docs[0].metadata["type"] == "episode"
    assert search.meter.calls == 3 and search.meter.bytes_read > 0  # one grep, two whole-file views
    assert grep_retrieve(search, "juggle the xylophone", 3) == []


def test_cli_refuses_what_it_cannot_run_before_writing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    runner = CliRunner()
    out = tmp_path / "r"

    def refused(*args: str) -> str:
        res = runner.invoke(cli, ["study", "skills", "--tasks", "1", "--out", str(out), *args])
        assert res.exit_code != 0 and isinstance(res.exception, MemdirError), res.output
        return str(res.exception)

    assert "unknown model 'gpt-x'" in refused("--variants", "no-store", "--model", "gpt-x")
    assert "set OPENAI_API_KEY" in refused("--variants", "no-store", "--model", "openai/gpt-x")
    assert "set OPENAI_API_KEY" in refused("--variants", "curated-skills", "--curator-model", "openai/gpt-x")
    assert "unknown variant(s) bogus" in refused("--variants", "no-store,bogus")
    assert "no price card" in refused("--variants", "no-store", "--price-card", "nope")
    assert not out.exists()
    assert set(FAMILIES.values()) == set(FAMILY_ORDER)


# -- the real environment -----------------------------------------------------------------
alfworld = pytest.importorskip("alfworld", reason="the optional 'alfworld' extra is not installed")

from memdir_study.bench.alfworld_env import AlfworldEnv  # noqa: E402
from memdir_study.skills.chain import run_chains  # noqa: E402
from memdir_study.skills.policy import OfflinePolicy  # noqa: E402
from memdir_study.skills.render import render_episode  # noqa: E402
from memdir_study.skills.report import write_report  # noqa: E402


@pytest.fixture(scope="module")
def place_env() -> AlfworldEnv:
    env = AlfworldEnv(PLACE)
    yield env  # type: ignore[misc]
    env.close()


def test_env_reset_step_and_step_cap(place_env: AlfworldEnv) -> None:
    obs = place_env.reset()
    assert place_env.episode and place_env.episode.task == "put a toiletpaper in toiletpaperhanger."
    assert "look" in obs.admissible and any(a.startswith("go to ") for a in obs.admissible)
    assert place_env.step("juggle").text == "Nothing happens."
    place_env.step_cap = 3
    try:
        place_env.step("look")
        last = place_env.step("look")
        assert last.done and not last.won and place_env.episode.n_steps == 3
        with pytest.raises(MemdirError, match="episode is over"):
            place_env.step("look")
    finally:
        place_env.step_cap = 50


def test_offline_policy_wins_with_the_environments_own_signal(place_env: AlfworldEnv) -> None:
    ep = OfflinePolicy().run(place_env)
    assert ep.won and ep.n_steps < 50
    assert ep.steps[-1][1].startswith("You put the toiletpaper")
    md = render_episode(3, ep)
    fm = frontmatter.parse(md)
    assert fm.name == "e003-place-toiletpaper" and fm.metadata["type"] == "episode"
    assert not frontmatter.validate(md, "e003-place-toiletpaper.md")
    assert "[E3]" in md and f"{len(ep.steps)}. > " in md


@pytest.mark.slow
def test_a_stored_episode_of_the_room_makes_the_policy_faster() -> None:
    with AlfworldEnv(KEYCHAIN) as env:
        cold = OfflinePolicy().run(env)
        assert cold.won
        cold_steps, doc = cold.n_steps, render_episode(1, cold)
        policy = OfflinePolicy()
        warm = policy.run(env, [("/memories/episodes/e001.md", doc)])
    assert policy.hints is not None and policy.hints.sources == ["/memories/episodes/e001.md"]
    assert warm.won and warm.n_steps < cold_steps


@pytest.mark.slow
def test_chain_run_folder_is_leak_free_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "run"
    variants = ["no-store", "episode-log", "curated-skills", "curated-skills-mem"]
    rows = run_chains(out, variants, games=[PLACE, LOOK, CLEAN])
    assert len(rows) == 12 and {r["variant"] for r in rows} == set(variants)
    for r in rows:
        store_dir = out / "stores" / r["variant"] / "chain-1"
        for path in r["served"]:  # leak-free: only entries written by earlier tasks
            idx = [
                int(k)
                for k in re.findall(r"\[E(\d+)\]", (store_dir / path.removeprefix("/memories/")).read_text())
            ]
            assert idx and max(idx) < r["index"], (r["variant"], r["index"], path)
    log = open_store(out / "stores" / "episode-log" / "chain-1")
    assert len([e for e in log.files("/memories/episodes") if e.path.name != "MEMORY.md"]) == 3
    # Each row names the store's snapshot after its task: the journal holds exactly tasks 1..i.
    journal = Journal(log.root)
    for r in rows:
        if r["variant"] == "episode-log":
            names = list(journal.files_at(r["snapshot"]))
            assert len([n for n in names if n.startswith("episodes/e")]) == r["index"]
        elif r["variant"] == "no-store":
            assert r["snapshot"] is None
    assert spec.validate(log).valid
    cells = write_report(out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cells"] == cells and len(cells) == 4
    for c in cells:
        assert {"variant", "model", "protocol", "n_tasks", "success", "success_by_family", "deploy_cost_usd",
                "build_cost_usd", "store_files", "store_kb"} <= c.keys()  # fmt: skip
        assert c["n_tasks"] == 3 and 0.0 <= c["success"] <= 1.0 and c["deploy_cost_usd"] == 0.0
    assert (out / "success_vs_nostore.png").stat().st_size > 1000 and (out / "store_size.png").is_file()
    assert "| no-store |" in (out / "report.md").read_text()
    with pytest.raises(MemdirError, match="already holds a store"):
        run_chains(out, ["episode-log"], games=[PLACE, LOOK, CLEAN])


@pytest.mark.slow
def test_outcome_gate_failures_write_notes_but_no_skill(tmp_path: Path) -> None:
    run_chains(tmp_path / "run", ["curated-skills", "curated-skills-mem"], games=[LOOK], step_cap=2)
    skills = open_store(tmp_path / "run" / "stores" / "curated-skills" / "chain-1")
    mem = open_store(tmp_path / "run" / "stores" / "curated-skills-mem" / "chain-1")
    assert not skills.exists("/memories/skills")
    notes = [e for e in mem.files("/memories/notes") if e.path.name != "MEMORY.md"]
    assert notes and all(frontmatter.parse(mem.read_text(e.path)).metadata["type"] == "note" for e in notes)
    assert spec.validate(mem).valid


@pytest.mark.slow
def test_three_chain_protocol_resets_the_store_between_chains(tmp_path: Path) -> None:
    rows = run_chains(tmp_path / "run", ["episode-log"], protocol="three", games=[PLACE, LOOK, KEYCHAIN])
    assert [(r["chain"], r["index"]) for r in rows] == [(1, 1), (2, 1), (3, 1)]
    assert all(r["served"] == [] and r["store_files"] == 1 for r in rows)  # one episode (no index files)
    cells = write_report(tmp_path / "run")
    assert cells[0]["chains"] == 3 and cells[0]["n_tasks"] == 3 and cells[0]["protocol"] == "three"


@pytest.mark.slow
def test_cli_tool_set_picks_the_retrieval_and_profiles(tmp_path: Path) -> None:
    """`--tool-set center-bm25` retrieves with BM25 through the search-bm25 profile, end to end."""
    out = tmp_path / "run"
    args = ["study", "skills", "--variants", "episode-log", "--tool-set", "center-bm25", "--tasks", "2"]
    res = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["retriever"] == "bm25_retrieve"
    assert manifest["tool_set"] == {"manage": "manage-bm25", "search": "search-bm25"}
    rows = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    goal = parse_goal(rows[0]["task"], rows[0]["family"])
    first = f"/memories/episodes/e001-{rows[0]['family']}-{goal.obj}.md"
    assert rows[0]["served"] == [] and set(rows[1]["served"]) <= {first}  # only what task 1 wrote
    # Task 2's retrieval went through BM25: the store now has its search index.
    assert (out / "stores" / "episode-log" / "chain-1" / ".memdir" / "index" / "manifest.sqlite").is_file()
