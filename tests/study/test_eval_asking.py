"""A cell's questions are asked one way, chosen from what its build left (eval/asking.py): on a
real dump store built by its variant, with the offline policies and a scripted model at the
LLM boundary."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from memdir.agents import RunRecord
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir_study.bench import load_sample
from memdir_study.bench.types import Question
from memdir_study.eval.asking import way_to_ask
from memdir_study.variants import VARIANTS, BuildContext, Built

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"


def dump(tmp_path: Path) -> tuple[Built, Question]:
    """The verbatim dump of the sample, and one of its questions made multiple choice."""
    sample = load_sample("generated", SAMPLE)
    built = asyncio.run(
        VARIANTS["verbatim-dump"].build(
            BuildContext(sample, tmp_path / "s", get_model("offline"), RunRecord(None))
        )
    )
    q = next(q for q in sample.questions if q.category == "current")
    return built, replace(q, id="mc", options=("a zebra-striped submarine", q.gold), gold="(b)")


def test_a_writing_search_profile_chooses_among_options_on_a_scratch_copy(tmp_path: Path) -> None:
    """The shell's bash can write: a multiple-choice question asked under it is put with its
    options on a copy, its letter mapped to the option, and the judged store left as it was."""
    from memdir.tools.sandbox import shell_available

    if not shell_available():
        pytest.skip("no sandbox for the shell tool on this machine")
    built, q = dump(tmp_path)
    assert built.store is not None
    before = {p: p.read_bytes() for p in (tmp_path / "s").rglob("*.md")}
    script = [
        call("bash", command="echo scribble >> session-01.md; rm -f session-02.md"),
        answer('{"answer": "(b)", "citations": []}'),
    ]
    model = get_model("scripted/shell", script=script)
    way = way_to_ask(replace(built, search_profile="shell"), "agentic")
    out = asyncio.run(
        way(model, q.question, list(q.options or ()), question_id=q.id, variant="v", record=RunRecord(None))
    )
    assert out.extra["choice"] == 1
    first = model.api.requests[0][0]  # type: ignore[attr-defined]
    assert "(a) a zebra-striped submarine" in "\n".join(m.content for m in first)
    assert {p: p.read_bytes() for p in (tmp_path / "s").rglob("*.md")} == before


def test_under_the_read_search_a_multiple_choice_question_is_still_a_choice(tmp_path: Path) -> None:
    """`--search read` is for open questions: a question with options goes to the choice role
    over the build's profile, which answers with one of them."""
    built, q = dump(tmp_path)
    way = way_to_ask(built, "read")
    out = asyncio.run(
        way(
            get_model("offline"),
            q.question,
            list(q.options or ()),
            question_id=q.id,
            variant="v",
            record=RunRecord(None),
        )
    )
    assert isinstance(out.extra["choice"], int) and out.answer


def test_without_a_store_the_question_is_closed_book_and_shown_its_options() -> None:
    script = [answer('{"answer": "(a)", "citations": []}')]
    model = get_model("scripted/closed", script=script)
    way = way_to_ask(Built("closed-book", None, None), "agentic")
    out = asyncio.run(
        way(model, "Which?", ["one", "two"], question_id="q", variant="closed-book", record=RunRecord(None))
    )
    ((messages, tools, _),) = model.api.requests  # type: ignore[attr-defined]
    assert out.extra["choice"] == 0 and tools == [] and "(b) two" in messages[-1].content
