"""summary.json from a run's cells and answers: one entry per cell with its scores (over all
items and without defective golds), its search cost per question, its build cost and its
store profile. Pure: the same cells and rows give the same summary, whatever order the
questions were answered in, how often the run was resumed, or which executor ran the cells.
So it holds no wall time: the seconds a build or a judge took go to timings.json
(`timings_of`), which the report reads beside it."""

from __future__ import annotations

from typing import Any, Protocol

from memdir.models.usage import Bounds
from memdir.study.eval.stats import Score, Summary, comparisons, summarize

SEARCH_KEYS = (
    "tool_calls",
    "rounds",
    "bytes_read",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
)


class _Config(Protocol):
    benchmark: str
    builder_model: str
    search_model: str
    judge: str
    tool_set: str
    price_card: str


def _score(s: Score) -> dict[str, Any]:
    return {"mean": None if s.mean is None else round(s.mean, 6), "n": s.n, "unscored": s.unscored}


def _summary(s: Summary) -> dict[str, Any]:
    return {
        "all": _score(s.all),
        "clean": _score(s.clean),
        "by_category": {c: _score(v) for c, v in s.by_category.items()},
    }


def search_means(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per question; None for a key some row lacks (rows written before it existed)."""
    n = len(rows)
    out: dict[str, Any] = {}
    for k in SEARCH_KEYS:
        values = [r["search"].get(k) for r in rows]
        out[k] = round(sum(values) / n, 6) if n and None not in values else None
    return out


def caching(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cell's intrinsic bounds summed over its questions' searches and their caching
    efficiency, `(no-cache - measured) / (no-cache - perfect)`: the share of what a perfect cache
    would save that the run's cache saved (the paper's Table 18, per cell). None when no question
    recorded bounds (offline baselines make no model call)."""
    total = Bounds(0, 0, 0)
    for r in rows:
        b = r["search"].get("bounds")
        if b:
            total += Bounds(b["no_cache"], b["measured"], b["perfect"])
    if total == Bounds(0, 0, 0):
        return None
    out = total.as_dict()
    eff = out["caching_efficiency"]
    return out | {"caching_efficiency": None if eff is None else round(eff, 6)}


def prompt_kb_mean(rows: list[dict[str, Any]]) -> float | None:
    """The mean size of the first search prompt as sent, over the questions that sent one (a
    model's; the offline baselines send none); each question's own is in its answer row."""
    sizes = [r["search"]["prompt_kb"] for r in rows if r["search"].get("prompt_kb") is not None]
    return round(sum(sizes) / len(sizes), 3) if sizes else None


F1_READ_AS_CORRECT = 0.5


def judge_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How far the LLM judge can be trusted on this cell: its unparsed verdicts, and
    `judge_f1_agreement`, our own measure (not the study's): the share of judged answers where
    the judge's CORRECT/WRONG matches offline F1 read as correct at F1 >= 0.5; its bill per
    question and attribution's three scales. None without an LLM judge (multiple choice is
    exact match, never sent to the correctness judge, but attributed)."""
    judged = _judged(rows)
    if not judged:
        return None
    labels = [lab for r in judged for lab in r["judge"]["labels"].values()]
    pairs = [
        (r["correctness"], r["f1"])
        for r in judged
        if "correctness" in r["judge"]["labels"] and r["correctness"] is not None and r["f1"] is not None
    ]
    agree = sum((c >= 1.0) == (f >= F1_READ_AS_CORRECT) for c, f in pairs)
    n = len(judged)
    return {
        "verdicts": len(labels),
        "unparsed": labels.count("unparsed"),
        "judge_f1_agreement": round(agree / len(pairs), 6) if pairs else None,
        "agreement_n": len(pairs),
        "input_tokens": round(sum(r["judge"]["input_tokens"] for r in judged) / n, 1),
        "output_tokens": round(sum(r["judge"]["output_tokens"] for r in judged) / n, 1),
        "cost_usd": round(sum(r["judge"].get("cost_usd") or 0.0 for r in judged) / n, 8),
        "scales": scale_means(judged),
    }


def scale_means(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Attribution's three scales (the paper's citation correctness, relevance, coherent
    aggregation), each a mean over the answers the judge scored; None when it scored none."""
    scored = [r["judge"]["scales"] for r in rows if r["judge"].get("scales")]
    if not scored:
        return None
    return {k: round(sum(s[k] for s in scored) / len(scored), 6) for k in scored[0]} | {"n": len(scored)}


def _judged(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if (r.get("judge") or {}).get("labels")]


def _cell_rows(cell: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        (r for r in rows if all(r.get(k) == v for k, v in cell.key.items())), key=lambda r: r["order"]
    )


def timings_of(cells: list[Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """timings.json: the wall time of each cell's build and its judge's mean per question, the
    figures that differ from one run of the same cells to the next."""
    out = []
    for cell in cells:
        judged = _judged(_cell_rows(cell, rows))
        judge = round(sum(r["judge"]["seconds"] for r in judged) / len(judged), 3) if judged else None
        out.append({**cell.key, "build_seconds": cell.build.get("seconds"), "judge_seconds": judge})
    return {"cells": out}


def summarize_run(config: _Config, cells: list[Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for cell in cells:
        mine = _cell_rows(cell, rows)
        defective = [r["question_id"] for r in mine if r.get("defective")]
        status = cell.status
        if status == "built":
            status = "ok" if mine and len(mine) >= cell.corpus.get("questions", 0) else "partial"
        out.append(
            {
                **cell.key,
                "model": config.search_model,
                "builder_model": config.builder_model,
                "judge": config.judge,
                "tool_set": config.tool_set,
                "price_card": config.price_card,
                "status": status,
                "reason": cell.reason,
                "n_questions": len(mine),
                "defective": defective,
                "correctness": _summary(summarize(mine, "correctness", defective)) if mine else None,
                "attribution": _summary(summarize(mine, "attribution", defective)) if mine else None,
                "f1": _summary(summarize(mine, "f1", defective)) if mine else None,
                "evidence_hit": _summary(summarize(mine, "evidence_hit", defective)) if mine else None,
                "search": {**search_means(mine), "prompt_kb": prompt_kb_mean(mine)},
                "judge_health": judge_summary(mine),
                "caching": caching(mine),
                "build": {k: v for k, v in cell.build.items() if k != "seconds"},
                "store": cell.store,
                "checks": cell.checks,
                "corpus": cell.corpus,
            }
        )
    # the sign tests of eval/stats.COMPARISONS, each naming its sidedness
    return {"cells": out, "paired": comparisons(rows)}
