"""The study's prompts (issue 36, items 1 and 3): the search prompt family of the paper's
Appendix A.3, one form per kind of store from shared blocks; the study's search agent sent no
core memory while the product's still is; the study's management prompt teaching the taxonomy
principles alone, memdir's keyed-fact conventions kept for memdir's own variant. Scripted
models at the LLM boundary; everything else real (the eval runner, the stores, the loop)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from memdir import Memory
from memdir.agents import RunRecord
from memdir.agents.answer import parse_answer
from memdir.agents.roles import CITE_EVERY_CLAIM, _load, get_role, render
from memdir.models import get_model, price_card
from memdir.models.scripted import answer
from memdir.store.boundary import NOTE
from memdir_study.bench import load_sample
from memdir_study.eval.runner import RunConfig, run_eval
from memdir_study.variants import VARIANTS, BuildContext, study_variants, variant_role

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"  # 4 sessions, 8 questions
REPLY = '{"answer": "vegan", "citations": ["/memories/session-01.md:6"]}'
SHARED = ("_search_intro", "_search_rules", "_answer_format")
FORM_BLOCKS = {  # what each form adds to the shared blocks, by a heading of its own
    "search": ("## How to find your way",),
    "search_foldered": ("## How to find your way", "## This store's files"),
    "search_dump": ("## This store\n", "## How to search it", "The store is flat"),
    "search_chunks": ("## This store and your one tool", "## How to search it"),
}
KEYED = (
    "alice | diet: vegan (since 2023-05-02)",
    "One live value per key",
    "Partition by person, then attribute",
)


def block(name: str) -> str:
    return _load(name).strip()


def system_of(variant: str | None) -> str:
    role = get_role("answer") if variant is None else variant_role("answer", variant)
    return render(role, question="Q?")[0]


def run_dump_cell(tmp_path: Path, variant: str = "verbatim-dump") -> tuple[Any, dict[str, Any], list[Any]]:
    model = get_model("scripted/search", script=[answer(REPLY), answer(REPLY)])
    cfg = RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=[variant],
        builder_model="offline",
        search_model="scripted/search",
        limit=2,
        in_flight=1,
    )
    out = tmp_path / "run"
    summary = run_eval(cfg, out, progress=False, models={"scripted/search": model})
    rows = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    return model, summary, rows


def test_an_eval_cell_on_the_dump_sends_no_core_memory(tmp_path: Path) -> None:
    """The paper's search agent gets its system prompt, the question and the fixed citation
    instruction: the dump's root sessions are not pasted in (they were, 31,924 tokens on conv-50)."""
    model, summary, rows = run_dump_cell(tmp_path)
    questions = {q.question for q in load_sample("generated", SAMPLE).questions}
    requests = model.api.requests
    assert len(requests) == 2
    for messages, _tools, _config in requests:
        system, user = messages[0].content, messages[1].content
        assert "<core_memory>" not in system + user and "[S1T1]" not in system + user
        question, instruction = user.split("\n\n", 1)
        assert question in questions and instruction == CITE_EVERY_CLAIM
        assert "## How to search it" in system  # the dump's own form
    # search.prompt_kb: the first round's prompt as sent, per question and its mean per cell
    (cell,) = summary.cells
    sent = [sum(len(m.content.encode()) for m in req[0][:2]) / 1024 for req in requests]
    assert sorted(r["search"]["prompt_kb"] for r in rows) == sorted(round(s, 3) for s in sent)
    assert cell.search.prompt_kb == round(sum(r["search"]["prompt_kb"] for r in rows) / 2, 3)
    assert 1 < cell.search.prompt_kb < 8  # the prompt alone, not the four sessions with it


def test_offline_search_sends_no_prompt_and_says_so(tmp_path: Path) -> None:
    cfg = RunConfig(
        benchmark="generated",
        conversations=[SAMPLE],
        variants=["verbatim-dump"],
        builder_model="offline",
        search_model="offline",
        limit=1,
    )
    summary = run_eval(cfg, tmp_path / "run", progress=False)
    assert summary.cells[0].search.prompt_kb is None


def test_memory_ask_still_sends_core_memory(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    model = get_model("scripted/ask", script=[answer(REPLY)])
    mem.ask("What does Alice eat?", model=model, search="agentic")
    (messages, _tools, _config) = model.api.requests[0]  # type: ignore[attr-defined]
    user = messages[1].content
    assert user.startswith(f"{NOTE}\n<core_memory>")  # inside the data boundary (store/boundary.py)
    assert user.endswith("What does Alice eat?\n\n" + CITE_EVERY_CLAIM)
    assert "## Reading memdir's keyed facts" in messages[0].content  # the product's stores are memdir's


@pytest.mark.parametrize(
    ("variant", "form"),
    [
        ("verbatim-dump", "search_dump"),
        ("foldered", "search_foldered"),
        ("chunk-retrieval", "search_chunks"),
        ("chunk-retrieval-hybrid", "search_chunks"),
        ("reorg-preserve", "search"),
        ("reorg-condense", "search"),
        ("agent-curated", "search"),
        ("agent-curated-keyed", "search"),
        ("split-curated", "search"),
    ],
)
def test_each_variant_gets_its_form_of_the_search_prompt(variant: str, form: str) -> None:
    role = variant_role("answer", variant)
    system, user = render(role, question="When did Calvin go to Tokyo?")
    assert role.template == form
    for name in SHARED:
        assert block(name) in system, name
    for heading in FORM_BLOCKS[form]:
        assert heading in system
    for other, headings in FORM_BLOCKS.items():
        if not set(headings) <= set(FORM_BLOCKS[form]):  # the foldered form is the base form's and more
            assert not all(h in system for h in headings), other
    keyed = variant in ("agent-curated-keyed", "split-curated")
    assert (block("_keyed_reading") in system) is keyed
    assert user == "When did Calvin go to Tokyo?\n\n" + CITE_EVERY_CLAIM


def test_the_study_management_prompt_teaches_the_taxonomy_alone() -> None:
    study, _ = render(variant_role("management", "agent-curated"), core_memory="", chunk="c", chunk_id=1)
    memdir, _ = render(
        variant_role("management", "agent-curated-keyed"), core_memory="", chunk="c", chunk_id=1
    )
    principles = ("Sibling distinction", "Sibling relatedness", "Parent-child coverage")
    principles += ("Tree-wide proximity", "Structural economy")
    for text in (study, memdir):
        assert all(p in text for p in principles) and block("_store_rules") in text
    assert not any(rule in study for rule in KEYED) and " | " not in study and "~~" not in study
    assert all(rule in memdir for rule in KEYED)
    # the study's reorganizers too; memdir's consolidation keeps its conventions
    for mode in ("preserve", "condense"):
        reorg, _ = render(
            variant_role(f"reorganize_{mode}", f"reorg-{mode}"), core_memory="", **{"pass": 1, "passes": 3}
        )
        assert not any(rule in reorg for rule in KEYED)
    kept, _ = render(get_role("reorganize_preserve"), core_memory="", **{"pass": 1, "passes": 3})
    assert all(rule in kept for rule in KEYED)
    product, _ = render(get_role("management"), core_memory="", chunk="c", chunk_id=1)
    assert all(rule in product for rule in KEYED)  # the product's store is memdir's own


def test_agent_curated_keyed_is_memdirs_variant_and_builds_with_its_prompt(tmp_path: Path) -> None:
    assert "agent-curated-keyed" in VARIANTS and "agent-curated-keyed" not in study_variants()
    sample = load_sample("generated", SAMPLE)
    chunks = len(sample.chunks())
    for variant, keyed in (("agent-curated", False), ("agent-curated-keyed", True)):
        model = get_model("scripted/builder", script=[answer("nothing to add") for _ in range(chunks)])
        ctx = BuildContext(
            sample, tmp_path / variant, model, RunRecord(None), "center", price_card("gpt-5.4-mini")
        )
        built = asyncio.run(VARIANTS[variant].build(ctx))
        assert built.variant == variant and built.search_profile == "search"
        systems = [req[0][0].content for req in model.api.requests]  # type: ignore[attr-defined]
        assert len(systems) == chunks
        assert all((KEYED[1] in s) is keyed for s in systems)


def test_bracketed_citations_in_an_answer_are_moved_to_its_citations() -> None:
    reply = json.dumps(
        {
            "answer": "Vegan [/memories/people/alice.md:12-14] since May "
            "[/memories/a.md > # A; /memories/b.md:3] [S6T5]",
            "citations": ["/memories/people/alice.md:12-14"],
        }
    )
    parsed = parse_answer(reply)
    assert parsed.answer == "Vegan since May [S6T5]"  # a locator names no path: it stays
    assert parsed.citations == ["/memories/people/alice.md:12-14", "/memories/a.md > # A", "/memories/b.md:3"]
