"""`memdir consolidate` and `memdir revert` through the real parts: a store on disk with its index
and journal, the reorganizer's tool loop on a working copy, the gates, the landing step. The
model is the scripted one, at the LLM boundary only (docs/consolidate.md)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import fm, snapshot
from memdir.agents.change_summary import summarize
from memdir.agents.consolidate import ConsolidationReport, consolidate
from memdir.agents.cost_cap import CostCap
from memdir.agents.landing import plan, sha256
from memdir.agents.revert import RevertError, revert
from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.models import ChatMessage, get_model
from memdir.models.scripted import ScriptedReply, answer, call
from memdir.models.usage import price_cards
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.tools.guards import GuardError, Guards
from memdir.tools.wiring import open_store

ACME = "- 2023-05-01: Alice works at Acme [S1T2]"
PETS = "## Pets\n- 2023-05-03: Bob adopted a dog named Rex [S2T4]\n"
ALICE = fm("alice", "Alice, a friend from work", f"# Alice\n\n## Work\n{ACME}\n")
BOB = fm("bob", "Bob, Alice's brother", f"# Bob\n\n## Home\n- 2023-05-02: Bob lives in Lyon [S1T5]\n\n{PETS}")
ROOT_INDEX = "# Memory\n- alice.md: Alice\n- bob.md: Bob\n"
PEOPLE_INDEX = "# People\n- alice.md: Alice\n- bob-pets.md: Bob's pets\n"

# A pass that only moves: a file into a folder, a section into a file of its own.
MOVES: list[Any] = [
    call("create", path="/memories/people/MEMORY.md", file_text=PEOPLE_INDEX),
    call("rename", old_path="/memories/alice.md", new_path="/memories/people/alice.md"),
    call("create", path="/memories/people/bob-pets.md", file_text=fm("bob-pets", "Bob's pets", PETS)),
    call("str_replace", path="/memories/bob.md", old_str="\n" + PETS, new_str=""),
    answer("moved Alice into people/ and Bob's pets into a file of their own"),
]


def _seed(root: Path) -> Store:
    store = open_store(root, create=True)
    with store.step("seed"):
        store.create("/memories/MEMORY.md", ROOT_INDEX)
        store.create("/memories/alice.md", ALICE)
        store.create("/memories/bob.md", BOB)
    return store


def _dirs(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir() and ".memdir" not in p.parts}


def _run(store: Store, script: list[Any], **kw: Any) -> ConsolidationReport:
    model = get_model("scripted", script=script)
    return asyncio.run(consolidate(model, store, passes=1, **kw))


def _untouched(store: Store, before: dict[str, bytes], head: str | None) -> None:
    assert snapshot(store.root) == before
    assert Journal(store.root).head() == head


def test_a_pass_that_drops_a_fact_is_refused_and_the_store_stays_byte_identical(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, head = snapshot(store.root), Journal(store.root).head()
    drop = call("str_replace", path="/memories/alice.md", old_str=ACME + "\n", new_str="")
    report = _run(store, [drop, answer("tidied Alice")])
    assert not report.landed and [g.name for g in report.failed] == ["facts_lost"]
    lost = report.failed[0]
    assert "1 sourced fact line lost" in lost.message and "Alice works at Acme [S1T2]" in lost.message
    assert lost.numbers["missing"] == ["/memories/alice.md:8"]
    assert report.summary.edited == ["/memories/alice.md"]  # what it would have done is still said
    assert report.verdict() == "not landed: gate facts_lost failed; the store is unchanged"
    _untouched(store, before, head)


def test_a_pass_that_only_moves_lands_as_one_step_and_revert_restores_every_byte(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, dirs, steps_before = snapshot(store.root), _dirs(store.root), Journal(store.root).steps()
    report = _run(store, MOVES)
    assert report.landed and not report.failed and [g.name for g in report.gates] == [
        "cost_cap", "facts_lost", "new_findings", "store_changed",
    ]  # fmt: skip
    s = report.summary
    assert s.moved == [("/memories/alice.md", "/memories/people/alice.md")]
    assert s.facts_moved == [("/memories/bob.md", "/memories/people/bob-pets.md", 1)]
    assert s.edited == ["/memories/bob.md"] and s.deleted == [] and s.merged == s.split == []
    assert s.created == ["/memories/people/MEMORY.md", "/memories/people/bob-pets.md"]
    assert (store.root / "people" / "alice.md").read_text() == ALICE and not (
        store.root / "alice.md"
    ).exists()

    journal = Journal(store.root)
    steps = journal.steps()
    assert len(steps) == len(steps_before) + 1 and report.step == steps[-1].index
    landed = steps[-1]
    assert landed.tool == "consolidate" and landed.meta["role"] == "reorganize_preserve"
    assert landed.meta["moved"] == "moved /memories/alice.md -> /memories/people/alice.md"
    assert "1 moved" in landed.meta["summary"] and "1 fact line moved" in landed.meta["summary"]
    assert ("rename", "/memories/alice.md", "/memories/people/alice.md") in {
        (c.kind, c.path, c.new_path) for c in landed.changes
    }

    undo = revert(store, landed.index)
    assert snapshot(store.root) == before and _dirs(store.root) == dirs
    steps = journal.steps()
    assert len(steps) == len(steps_before) + 2 and undo.step == steps[-1].index
    assert steps[-1].tool == "revert" and steps[-1].meta["reverted"] == str(landed.index)
    assert undo.ops.renames == (("/memories/people/alice.md", "/memories/alice.md"),)
    # the revert is a step like any other: reverting it brings the consolidation back
    redo = revert(store, undo.step)
    assert (store.root / "people" / "bob-pets.md").is_file() and redo.step == undo.step + 1


def test_the_token_cap_stops_the_pass_before_its_calls_run(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, head = snapshot(store.root), Journal(store.root).head()
    model = get_model("scripted", script=[call("delete", path="/memories/bob.md"), answer("done")])
    report = asyncio.run(consolidate(model, store, caps=CostCap(max_tokens=50), passes=1))
    assert not report.landed and [g.name for g in report.failed] == ["cost_cap"]
    assert "over the cap of 50" in report.failed[0].message and report.usage.calls == 1
    assert report.summary.empty  # the reply that passed the cap never reached its tool calls
    assert model.usage.calls == 1 and model.usage.input_uncached > 50  # what it cost is on the model
    _untouched(store, before, head)


def test_the_dollar_and_seconds_caps_stop_a_pass(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, head = snapshot(store.root), Journal(store.root).head()
    card = price_cards()["gpt-5.4-mini"]
    dollars = _run(store, [call("delete", path="/memories/bob.md")], caps=CostCap(max_usd=1e-6, card=card))
    assert [g.name for g in dollars.failed] == ["cost_cap"]
    assert dollars.stopped is not None and "over the cap of $0.0000" in dollars.stopped
    assert dollars.cost_usd is not None and dollars.cost_usd > 1e-6
    timed = _run(store, [call("delete", path="/memories/bob.md")], caps=CostCap(max_seconds=0))
    assert [g.name for g in timed.failed] == ["cost_cap"] and timed.usage.calls == 0
    assert "at or over the cap of 0 s" in timed.failed[0].message
    _untouched(store, before, head)
    unpriced = get_model("scripted/unpriced", script=[])
    with pytest.raises(MemdirError, match="no price card for 'scripted/unpriced'"):
        asyncio.run(consolidate(unpriced, store, caps=CostCap(max_usd=1.0)))


def test_a_pass_that_adds_a_dangling_reference_fails_new_findings(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, head = snapshot(store.root), Journal(store.root).head()
    xref = call(
        "str_replace", path="/memories/bob.md", old_str="# Bob\n", new_str="# Bob\nsee /memories/nobody.md\n"
    )
    report = _run(store, [xref, answer("linked")])
    assert [g.name for g in report.failed] == ["new_findings"]
    assert "1 new finding: [dangling-xref] /memories/bob.md:" in report.failed[0].message
    assert "'see /memories/nobody.md' points at nothing" in report.failed[0].message
    _untouched(store, before, head)


def test_a_dry_run_shows_the_diff_and_lands_nothing(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    before, head = snapshot(store.root), Journal(store.root).head()
    report = _run(store, MOVES, dry_run=True)
    assert not report.landed and not report.failed and report.verdict().startswith("dry run")
    diff = report.diff
    assert "rename /memories/alice.md -> /memories/people/alice.md (same bytes)\n" in diff
    assert "--- a/memories/bob.md\n+++ b/memories/bob.md\n" in diff and "-## Pets\n" in diff
    assert "--- /dev/null\n+++ b/memories/people/bob-pets.md\n" in diff
    _untouched(store, before, head)


def _also(edit: Callable[[], None], item: ScriptedReply) -> Callable[[list[ChatMessage]], ScriptedReply]:
    def reply(messages: list[ChatMessage]) -> ScriptedReply:
        edit()
        return item

    return reply


def test_a_store_written_during_the_pass_is_not_overwritten(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    other = open_store(store.root)  # another writer on the live store, while the model runs
    oslo = BOB + "- 2023-06-01: Bob moved to Oslo [S3T1]\n"

    def write() -> None:
        with other.step("str_replace"):
            other.write("/memories/bob.md", oslo)

    script = [_also(write, MOVES[0]), MOVES[1], answer("moved Alice")]
    report = _run(store, script)
    assert [g.name for g in report.failed] == ["store_changed"] and not report.landed
    assert "the store changed during the pass (1 file: /memories/bob.md)" in report.failed[0].message
    assert (store.root / "alice.md").read_text() == ALICE and (store.root / "bob.md").read_text() == oslo
    assert Journal(store.root).steps()[-1].tool == "str_replace"  # the other writer's step is the last


def test_a_landing_refused_part_way_puts_back_what_it_had_changed(tmp_path: Path) -> None:
    _seed(tmp_path / "mem")
    store = open_store(tmp_path / "mem", guards=Guards(core_budget=1_000))  # an operator's guard
    before, head = snapshot(store.root), Journal(store.root).head()
    # New files land in path order before any edit or removal (landing.apply): this one comes last.
    notes = call("create", path="/memories/zz-notes.md", file_text=fm("zz-notes", "notes", "word " * 2_000))
    with pytest.raises(GuardError, match="over this store's budget of 1,000"):
        _run(store, [*MOVES[:-1], notes, answer("done")])  # lands the move and new files, then refused
    assert snapshot(store.root) == before and not (store.root / "people").exists()
    journal = Journal(store.root)  # what happened is journaled, and its net effect is nothing
    assert journal.head() != head and journal.files_at(journal.head() or "") == journal.files_at(head or "")


def test_revert_refuses_what_would_undo_more_than_its_step(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    landed = _run(store, MOVES)
    assert landed.step is not None
    with store.step("str_replace"):
        store.write("/memories/bob.md", BOB)
    with pytest.raises(RevertError, match=rf"step {landed.step} is not the newest"):
        revert(store, landed.step)
    (store.root / "bob.md").write_text("edited by hand\n")
    with pytest.raises(RevertError, match=r"1 file\(s\) differ from the journal's newest snapshot"):
        revert(store, landed.step + 1)
    with pytest.raises(RevertError, match="step 0 is the baseline"):
        revert(store, 0)
    with pytest.raises(RevertError, match="there is no step 99"):
        revert(store, 99)
    forced = revert(store, landed.step, force=True)  # back to before the pass, the later step too
    assert forced.undone == [landed.step, landed.step + 1] and (store.root / "bob.md").read_text() == BOB
    assert (store.root / "alice.md").read_text() == ALICE and not (store.root / "people").exists()


def test_summary_names_merges_and_splits() -> None:
    a = fm("a", "a", "- Alice likes tea [S1T1]\n").encode()
    b = fm("b", "b", "- Bob likes coffee [S1T2]\n").encode()
    s = fm("s", "s", "- Carol runs [S2T1]\n- Dan swims [S2T2]\n").encode()
    ab = fm("ab", "ab", "- Alice likes tea [S1T1]\n- Bob likes coffee [S1T2]\n").encode()
    x, y = fm("x", "x", "- Carol runs [S2T1]\n").encode(), fm("y", "y", "- Dan swims [S2T2]\n").encode()
    old = {"/memories/a.md": a, "/memories/b.md": b, "/memories/s.md": s}
    new = {"/memories/ab.md": ab, "/memories/x.md": x, "/memories/y.md": y}
    ops = plan({p: sha256(d) for p, d in old.items()}, {p: sha256(d) for p, d in new.items()})
    summary = summarize(ops, old, new)
    assert summary.merged == [(["/memories/a.md", "/memories/b.md"], "/memories/ab.md")]
    assert summary.split == [("/memories/s.md", ["/memories/x.md", "/memories/y.md"])]
    assert summary.deleted == [] and summary.facts_moved == []
    assert "merged /memories/a.md + /memories/b.md -> /memories/ab.md" in summary.lines()


def _script_file(tmp_path: Path, steps: list[Any]) -> str:
    data = [
        s.content
        if not s.tool_calls
        else {"tool_calls": [{"name": n, "arguments": a} for n, a in s.tool_calls]}
        for s in steps
    ]
    path = tmp_path / f"script-{len(list(tmp_path.glob('script-*')))}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_cli_exit_codes_and_messages(tmp_path: Path) -> None:
    store = _seed(tmp_path / "mem")
    root = str(store.root)
    base = ["consolidate", root, "--model", "scripted", "--passes", "1"]
    runner = CliRunner()

    offline = runner.invoke(cli, ["consolidate", root, "--model", "offline"])
    assert offline.exit_code == 2 and "cannot reorganize a store; use a model" in offline.output

    drop = call("str_replace", path="/memories/alice.md", old_str=ACME + "\n", new_str="")
    refused = runner.invoke(cli, [*base, "--script", _script_file(tmp_path, [drop, answer("done")])])
    assert refused.exit_code == 1, refused.output
    assert "FAIL facts_lost: 1 sourced fact line lost" in refused.output
    assert "not landed: gate facts_lost failed" in refused.output

    dry = runner.invoke(cli, [*base, "--dry-run", "--json", "--script", _script_file(tmp_path, MOVES)])
    assert dry.exit_code == 0, dry.output
    out = json.loads(dry.stdout)
    assert (
        out["landed"] is False and out["failed"] == [] and "+++ b/memories/people/bob-pets.md" in out["diff"]
    )

    landed = runner.invoke(cli, [*base, "--max-tokens", "1000000", "--script", _script_file(tmp_path, MOVES)])
    assert landed.exit_code == 0, landed.output
    step = Journal(store.root).steps()[-1].index
    assert f"landed as journal step {step}" in landed.output
    assert "  moved /memories/alice.md -> /memories/people/alice.md" in landed.output
    assert f"undo with: memdir revert {root} {step}" in landed.output

    undone = runner.invoke(cli, ["revert", root, str(step)])
    assert undone.exit_code == 0, undone.output
    assert f"reverted step {step} (consolidate) as journal step {step + 1}" in undone.output
    again = runner.invoke(cli, ["revert", root, str(step)])
    assert again.exit_code == 2 and f"step {step} is not the newest" in again.output
