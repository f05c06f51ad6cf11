"""Each variant builder on a tiny generated conversation: layout, frontmatter, build cost, and
the checks (foldering move-only, diff --facts) with a scripted model at the LLM boundary."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memdir.agents import RunRecord
from memdir.agents.dump_format import turn_line
from memdir.models import get_model, price_card
from memdir.models.scripted import answer, call
from memdir.store import frontmatter, spec
from memdir.store.store import Store
from memdir_study.bench import load_sample
from memdir_study.roles import FolderingError
from memdir_study.variants import (
    VARIANTS,
    BuildContext,
    Built,
    VariantUnavailable,
    build_cost,
    parse_variants,
)

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"  # 4 sessions, 12 turns


def ctx(tmp_path: Path, model: str = "offline", script: list[object] | None = None) -> BuildContext:
    m = get_model(model, script=script) if model != "offline" else get_model("offline")
    return BuildContext(
        load_sample("generated", SAMPLE),
        tmp_path / "store",
        m,
        RunRecord(None),
        "center",
        price_card("gpt-5.4-mini"),
    )


def build(c: BuildContext, variant: str) -> Built:
    return asyncio.run(VARIANTS[variant].build(c))


def valid_frontmatter(store: Store) -> None:
    for e in store.files(suffix=".md"):
        assert frontmatter.validate(store.read_text(e.path), e.path.name) == [], e.path.text
    assert spec.validate(store).valid, spec.validate(store).violations


def test_variant_names_and_all() -> None:
    assert parse_variants("all") == [
        "closed-book",
        "chunk-retrieval",
        "verbatim-dump",
        "foldered",
        "reorg-preserve",
        "reorg-condense",
        "agent-curated",
    ]
    assert parse_variants("agent-curated,closed-book") == ["closed-book", "agent-curated"]
    with pytest.raises(VariantUnavailable, match="unknown variant"):
        parse_variants("curated-ish")


def test_closed_book_has_no_store(tmp_path: Path) -> None:
    built = build(ctx(tmp_path), "closed-book")
    assert built.store is None and not (tmp_path / "store").exists()


def test_verbatim_dump_one_file_per_session_zero_cost(tmp_path: Path) -> None:
    c = ctx(tmp_path)
    built = build(c, "verbatim-dump")
    assert built.store is not None
    names = sorted(e.path.name for e in built.store.files(suffix=".md"))
    assert names == ["MEMORY.md", "session-01.md", "session-02.md", "session-03.md", "session-04.md"]
    text = built.store.read_text("/memories/session-02.md")
    fm = frontmatter.parse(text).data
    turns = c.sample.session_turns()[2]
    speakers = " and ".join(dict.fromkeys(t.speaker for t in turns))
    assert fm["description"] == f"Session 2, {c.sample.session_dates[2]}, {speakers}"
    for t in turns:  # every turn verbatim, with its locator
        assert f"{t.speaker}: {' '.join(t.text.split())} [{t.locator}]" in text
    valid_frontmatter(built.store)
    assert build_cost(c.record.entries, c.price_card, 0.0)["tool_calls"] == 0


def test_chunk_retrieval_store_and_profile(tmp_path: Path) -> None:
    c = ctx(tmp_path)
    built = build(c, "chunk-retrieval")
    assert built.search_profile == "chunk-retrieval" and built.store is not None
    chunks = [e for e in built.store.files(suffix=".md") if e.path.name.startswith("chunk-")]
    assert len(chunks) == len(c.sample.chunks())
    valid_frontmatter(built.store)


def test_agent_curated_offline_records_its_build_cost(tmp_path: Path) -> None:
    c = ctx(tmp_path)
    seen: list[tuple[int, int]] = []
    c.progress = lambda done, total: seen.append((done, total))
    built = build(c, "agent-curated")
    assert built.store is not None and built.store.is_dir("/memories/people")
    n = len(c.sample.chunks())
    assert seen == [(i, n) for i in range(1, n + 1)]  # the build bar advances chunk by chunk
    cost = build_cost(c.record.entries, c.price_card, 1.5)
    assert cost["tool_calls"] > len(c.sample.chunks())  # at least one call per chunk
    assert cost["bytes_read"] > 0 and cost["cost_usd"] == 0.0 and cost["seconds"] == 1.5
    valid_frontmatter(built.store)


@pytest.mark.parametrize("variant", ["foldered", "reorg-preserve", "reorg-condense"])
def test_model_only_variants_are_unavailable_offline(tmp_path: Path, variant: str) -> None:
    with pytest.raises(VariantUnavailable, match="needs a model"):
        build(ctx(tmp_path), variant)


def test_foldered_moves_only_and_says_which(tmp_path: Path) -> None:
    script = [
        call("rename", old_path="/memories/session-01.md", new_path="/memories/early/session-01.md"),
        call("rename", old_path="/memories/session-02.md", new_path="/memories/early/session-02.md"),
        answer("Moved the first two sessions into early/."),
    ]
    c = ctx(tmp_path, "scripted/folder", script)
    built = build(c, "foldered")
    f = built.checks["foldering"]
    assert f["verified"] and f["moved"] == 2
    assert f["moves"]["/memories/session-01.md"] == "/memories/early/session-01.md"
    cost = build_cost(c.record.entries, c.price_card, 0.0)
    assert cost["tool_calls"] == 2 and cost["input_tokens"] > 0 and cost["cost_usd"] > 0


def test_foldered_that_edits_is_refused(tmp_path: Path) -> None:
    # the folder profile has no write tool but rename; a file that changes on disk meanwhile
    # (simulated by the model's view being followed by an outside edit) must fail verification
    c = ctx(tmp_path, "scripted/folder", [])

    def edit_then_answer(messages: object) -> object:
        p = tmp_path / "store" / "session-01.md"
        p.write_text(p.read_text() + "- an invented fact [S1T99]\n")
        return answer("done")

    c.model.api.script.append(edit_then_answer)  # type: ignore[attr-defined]
    with pytest.raises(FolderingError, match="not move-only"):
        build(c, "foldered")


def test_reorg_condense_that_drops_a_fact_is_recorded(tmp_path: Path) -> None:
    sample = load_sample("generated", SAMPLE)
    first = sample.session_turns()[1][0]
    line = turn_line(first, sample.session_dates.get(1) or first.date)  # the line the dump wrote
    script = [
        call("str_replace", path="/memories/session-01.md", old_str=line + "\n", new_str=""),
        answer("Condensed session 1."),
        answer("Nothing more to do."),
        answer("Done."),
    ]
    c = ctx(tmp_path, "scripted/reorg", script)
    built = build(c, "reorg-condense")
    d = built.checks["diff_facts"]
    assert not d["ok"] and d["missing_count"] == 1
    assert d["missing"][0]["locators"] == [first.locator]
    assert d["old_facts"] == len(sample.turns) and d["new_facts"] == len(sample.turns) - 1


def test_reorg_preserve_that_moves_keeps_every_fact(tmp_path: Path) -> None:
    script = [
        call("rename", old_path="/memories/session-01.md", new_path="/memories/part-1/session-01.md"),
        answer("pass 1"),
        answer("pass 2"),
        answer("pass 3"),
    ]
    built = build(ctx(tmp_path, "scripted/reorg", script), "reorg-preserve")
    d = built.checks["diff_facts"]
    assert d["ok"] and d["missing_count"] == 0 and d["moved"] > 0


def test_offline_searcher_answers_from_retrieved_chunks(tmp_path: Path) -> None:
    from memdir.agents import answer_question

    c = ctx(tmp_path)
    built = build(c, "chunk-retrieval")
    assert built.store is not None
    q = next(q for q in c.sample.questions if q.category == "current")
    out = asyncio.run(answer_question(c.model, built.store, q.question, profile="chunk-retrieval"))
    (cite,) = out.citations
    path, _, line = cite.rpartition(":")
    assert path.startswith("/memories/chunks/chunk-")
    cited = built.store.read_text(path).split("\n")[int(line) - 1]
    assert cited.startswith("[S") and out.answer and out.answer in " ".join(cited.split())
