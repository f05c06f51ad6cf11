"""summary.json from a run's cells and answers: one entry per cell with its scores (over all
items and without defective golds), its search cost per question, its build cost and its
store profile. Pure: the same cells and rows give the same summary, whatever order the
questions were answered in, how often the run was resumed, or which executor ran the cells.
So it holds no wall time: the seconds a build or a judge took go to timings.json
(`timings_of`), which the report reads beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from memdir.jsontypes import record_json
from memdir.models.usage import Bounds
from memdir_study.eval.records import (
    AnswerRow,
    CacheBounds,
    CellSummary,
    CellTimings,
    CorpusProfile,
    JudgeHealth,
    RunSummary,
    RunTimings,
    ScaleMeans,
    SearchMeans,
)
from memdir_study.eval.stats import comparisons, summarize
from memdir_study.variants import BuildChecks, BuildCost

SEARCH_KEYS = tuple(k for k in SearchMeans.model_fields if k != "prompt_kb")


class _Config(Protocol):
    benchmark: str
    builder_model: str
    search_model: str
    judge: str
    tool_set: str
    price_card: str


class _Cell(Protocol):
    """A cell as the runner leaves it (`runner.ConversationCell`)."""

    status: str
    reason: str | None
    build: BuildCost
    store: dict[str, Any] | None
    checks: BuildChecks
    corpus: CorpusProfile

    @property
    def key(self) -> dict[str, str]: ...


def search_means(rows: list[AnswerRow]) -> SearchMeans:
    """Means per question; None for a field some row lacks (rows written before it existed)."""
    n = len(rows)
    out: dict[str, float | None] = {}
    for k in SEARCH_KEYS:
        values = [getattr(r.search, k) for r in rows]
        out[k] = round(sum(values) / n, 6) if n and None not in values else None
    return SearchMeans(**out, prompt_kb=prompt_kb_mean(rows))


def caching(rows: list[AnswerRow]) -> CacheBounds | None:
    """The cell's intrinsic bounds summed over its questions' searches and their caching
    efficiency, `(no-cache - measured) / (no-cache - perfect)`: the share of what a perfect cache
    would save that the run's cache saved (the paper's Table 18, per cell). None when no question
    recorded bounds (offline baselines make no model call)."""
    total = Bounds(0, 0, 0)
    for r in rows:
        b = r.search.bounds
        if b:
            total += Bounds(b.no_cache, b.measured, b.perfect)
    if total == Bounds(0, 0, 0):
        return None
    eff = total.caching_efficiency
    return CacheBounds(
        no_cache=total.no_cache,
        measured=total.measured,
        perfect=total.perfect,
        caching_efficiency=None if eff is None else round(eff, 6),
    )


def prompt_kb_mean(rows: list[AnswerRow]) -> float | None:
    """The mean size of the first search prompt as sent, over the questions that sent one (a
    model's; the offline baselines send none); each question's own is in its answer row."""
    sizes = [r.search.prompt_kb for r in rows if r.search.prompt_kb is not None]
    return round(sum(sizes) / len(sizes), 3) if sizes else None


F1_READ_AS_CORRECT = 0.5


def judge_summary(rows: list[AnswerRow]) -> JudgeHealth | None:
    """How far the LLM judge can be trusted on this cell: its unparsed verdicts, and
    `judge_f1_agreement`, our own measure (not the study's): the share of judged answers where
    the judge's CORRECT/WRONG matches offline F1 read as correct at F1 >= 0.5; its bill per
    question and attribution's three scales. None without an LLM judge (multiple choice is
    exact match, never sent to the correctness judge, but attributed)."""
    judged = [(r, r.judge) for r in rows if r.judge is not None and r.judge.labels]
    if not judged:
        return None
    labels = [lab for _, j in judged for lab in j.labels.values()]
    pairs = [
        (r.correctness, r.f1)
        for r, j in judged
        if "correctness" in j.labels and r.correctness is not None and r.f1 is not None
    ]
    agree = sum((c >= 1.0) == (f >= F1_READ_AS_CORRECT) for c, f in pairs)
    n = len(judged)
    return JudgeHealth(
        verdicts=len(labels),
        unparsed=labels.count("unparsed"),
        judge_f1_agreement=round(agree / len(pairs), 6) if pairs else None,
        agreement_n=len(pairs),
        input_tokens=round(sum(j.input_tokens for _, j in judged) / n, 1),
        output_tokens=round(sum(j.output_tokens for _, j in judged) / n, 1),
        cost_usd=round(sum(j.cost_usd or 0.0 for _, j in judged) / n, 8),
        scales=scale_means(rows),
    )


def scale_means(rows: list[AnswerRow]) -> ScaleMeans | None:
    """Attribution's three scales (the paper's citation correctness, relevance, coherent
    aggregation), each a mean over the answers the judge scored; None when it scored none."""
    scored = [r.judge.scales for r in rows if r.judge is not None and r.judge.scales]
    if not scored:
        return None
    means = {k: round(sum(s[k] for s in scored) / len(scored), 6) for k in scored[0]}
    return ScaleMeans.model_validate(means | {"n": len(scored)})


def _judged(rows: list[AnswerRow]) -> bool:
    """Whether any answer has the study's composite (an LLM judge scored it): offline cells
    carry no composite column rather than one of unscored answers."""
    return any(r.composite is not None for r in rows)


def _cell_rows(cell: _Cell, rows: list[AnswerRow]) -> list[AnswerRow]:
    return sorted((r for r in rows if r.key == cell.key), key=lambda r: r.order)


def timings_of(cells: Sequence[_Cell], rows: list[AnswerRow]) -> RunTimings:
    """timings.json: the wall time of each cell's build and its judge's mean per question, the
    figures that differ from one run of the same cells to the next."""
    out = []
    for cell in cells:
        judged = [r.judge for r in _cell_rows(cell, rows) if r.judge is not None and r.judge.labels]
        judge = round(sum(j.seconds for j in judged) / len(judged), 3) if judged else None
        out.append(CellTimings(**cell.key, build_seconds=cell.build.get("seconds"), judge_seconds=judge))
    return RunTimings(cells=out)


def summarize_run(config: _Config, cells: Sequence[_Cell], rows: list[AnswerRow]) -> RunSummary:
    out: list[CellSummary] = []
    for cell in cells:
        mine = _cell_rows(cell, rows)
        defective = [r.question_id for r in mine if r.defective]
        status = cell.status
        if status == "built":
            status = "ok" if mine and len(mine) >= cell.corpus.get("questions", 0) else "partial"
        out.append(
            CellSummary(
                **cell.key,
                model=config.search_model,
                builder_model=config.builder_model,
                judge=config.judge,
                tool_set=config.tool_set,
                price_card=config.price_card,
                status=status,
                reason=cell.reason,
                n_questions=len(mine),
                defective=defective,
                correctness=summarize(mine, "correctness", defective) if mine else None,
                attribution=summarize(mine, "attribution", defective) if mine else None,
                f1=summarize(mine, "f1", defective) if mine else None,
                evidence_hit=summarize(mine, "evidence_hit", defective) if mine else None,
                composite=summarize(mine, "composite", defective) if _judged(mine) else None,
                search=search_means(mine),
                judge_health=judge_summary(mine),
                caching=caching(mine),
                build={k: v for k, v in record_json(cell.build).items() if k != "seconds"},
                store=cell.store,
                checks=dict(record_json(cell.checks)),
                corpus=dict(record_json(cell.corpus)),
            )
        )
    # the sign tests of eval/stats.COMPARISONS, each naming its sidedness
    return RunSummary(cells=out, paired=comparisons(rows))
