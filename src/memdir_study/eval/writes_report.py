"""What `memdir study bench writes` reports, derived from its rows alone: per conversation and pooled
figures (`summary.json`), the table, and the plot of recall against cost, one point per run
folder (a curator: a model and a curation), so several runs land on one plot.

Pooled figures are ratios of sums over conversations (a long conversation weighs more), as the
counts in each row allow; the mean over conversations of the recall and precision ratios is
given beside them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, JsonValue, array, count, figure, number, obj, record_json
from memdir.models.usage import Usage
from memdir.store.atomic import write_atomic
from memdir_study.eval import keyscore, updates_run
from memdir_study.eval.writes import GROUPS, WriteScore

if TYPE_CHECKING:
    from rich.table import Table

SUMMARY = "summary.json"
PLOT = "writes.png"
COLUMNS = (
    *("conversation", "lines", "R all", "R dist", "R verb", "P dist", "P strict", "false", "P verb"),
    *("junk", "forged"),
    *("tok/chunk", "s/chunk", "tok/kept", "s/kept", "lines/kept", "KB/kept", "check"),
)


class WritesSummary(TypedDict):
    """`summary.json`: the run's settings, each conversation's `figures` by id, the pooled
    figures (None for a run with no row yet) and the means over conversations."""

    settings: JsonObject
    conversations: dict[str, JsonObject]
    pooled: JsonObject | None
    mean: dict[str, float | None]


Row = Mapping[str, JsonValue]  # one conversation's line of writes.jsonl (`writes_run`)


def _ratio(a: float, b: float, digits: int = 3) -> float | None:
    return round(a / b, digits) if b else None


def figures(rows: Sequence[Row]) -> JsonObject:
    """The figures of some rows together: one conversation's, or the pooled ones."""
    scored = reduce(lambda a, b: a + b, (WriteScore.from_json(obj(r["score"])) for r in rows), WriteScore())
    used = reduce(lambda a, b: a + b, (Usage.from_dict(obj(r["usage"])) for r in rows), Usage())
    chunks = sum(count(r["chunks"]) for r in rows)
    seconds = sum(number(r["seconds"]) for r in rows)
    size = sum(count(obj(r["store"])["bytes"]) for r in rows)
    kept = scored.kept["all"] if scored.observations else 0
    every = [number(s) for r in rows for s in array(r.get("chunk_seconds"))]
    costs = {
        "calls": used.calls,
        "input_tokens": used.prompt,
        "output_tokens": used.output,
        "seconds": seconds,
    }
    data = scored.as_json()
    out: JsonObject = {
        "conversations": len(rows),
        "turns": sum(count(r["turns"]) for r in rows),
        "chunks": chunks,
        "chunks_unchanged": sum(count(r.get("chunks_unchanged")) for r in rows),
        "recall": data["recall"],
        "precision": data["precision"],
        "precision_strict": data["precision_strict"],
        "false_lines": data["false_lines"],
        "false_line_count": data["false_line_count"],
        "recall_distilled_strict": data["recall_distilled_strict"],
        "fact_lines": data["fact_lines"],
        "good_lines": data["good_lines"],
        "keyed_lines": data["keyed_lines"],
        "kind_lines": data["kind_lines"],
        "forged_lines": data["forged_lines"],
        "junk_lines": data["junk_lines"],
        "junk_rate": data["junk_rate"],
        "junk_reasons": data["junk_reasons"],
        "observations": data["observations"],
        "kept": data["kept"],
        "store": {"files": sum(count(obj(r["store"])["files"]) for r in rows), "bytes": size},
        "check": {k: sum(count(obj(r["check"])[k]) for r in rows) for k in ("problems", "warnings")},
        "usage": record_json(used.as_dict()),
        "seconds": round(seconds, 3),
        "per_chunk": {k: _ratio(v, chunks) for k, v in costs.items()},
        "median_chunk_seconds": round(statistics.median(every), 3) if every else None,
        "per_kept_fact": {
            "lines": _ratio(scored.lines["all"], kept),
            "bytes": _ratio(size, kept, 1),
            **{k: _ratio(v, kept) for k, v in costs.items()},
        },
    }
    if len(rows) == 1:
        out["examples"] = data["examples"]
        out["reference_skipped"] = rows[0].get("reference_skipped", {})
    # update accuracy, the generated benchmark's (memdir_study/eval/updates.py, docs/metrics.md)
    out.update(updates_run.pooled(rows))
    out.update(keyscore.pooled(rows))  # the truth key's recall and precision (memdir_study/eval/keyscore.py)
    return out


def summary(rows: Sequence[Row], settings: Mapping[str, JsonValue]) -> WritesSummary:
    """`summary.json`: the run's settings, each conversation's figures, the pooled ones, and
    the mean over conversations of each recall and precision."""
    per = {str(r["conversation"]): figures([r]) for r in rows}
    mean: dict[str, float | None] = {}
    for measure in ("recall", "precision", "precision_strict"):
        for g in GROUPS:
            values = [v for f in per.values() if (v := figure(f, measure, g)) is not None]
            mean[f"{measure}_{g}"] = round(statistics.fmean(values), 4) if values else None
    rates = [v for f in per.values() if (v := figure(f, "junk_rate")) is not None]
    mean["junk_rate"] = round(statistics.fmean(rates), 4) if rates else None
    mean["junk_rate_max"] = max(rates) if rates else None
    return {
        "settings": dict(settings),
        "conversations": per,
        "pooled": figures(rows) if rows else None,
        "mean": mean,
    }


def write_summary(out: Path, data: WritesSummary) -> Path:
    path = out / SUMMARY
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return path


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "" if x is None else format(x, fmt)


def table_rows(data: WritesSummary) -> list[list[str]]:
    """The table's cells: a row per conversation, then the pooled row."""
    found: list[tuple[str, JsonObject]] = list(data["conversations"].items())
    if data["pooled"] is not None and len(found) > 1:
        found.append(("pooled", data["pooled"]))
    cells = []
    for cid, f in found:
        chunk, kept = obj(f.get("per_chunk")), obj(f.get("per_kept_fact"))
        tokens_chunk = _sum(figure(chunk, "input_tokens"), figure(chunk, "output_tokens"))
        tokens_kept = _sum(figure(kept, "input_tokens"), figure(kept, "output_tokens"))
        kept_bytes = figure(kept, "bytes")
        kb_kept = None if kept_bytes is None else kept_bytes / 1024
        junk_rate = figure(f, "junk_rate")
        check = obj(f.get("check"))
        cells.append(
            [
                cid,
                str(obj(f.get("fact_lines")).get("all")),
                *(_f(figure(f, "recall", g)) for g in GROUPS),
                _f(figure(f, "precision", "distilled")),
                _f(figure(f, "precision_strict", "distilled")),
                str(f.get("false_line_count")),
                _f(figure(f, "precision", "verbatim")),
                f"{f.get('junk_lines')}" + (f" ({junk_rate:.1%})" if junk_rate is not None else ""),
                str(f.get("forged_lines")),
                _f(tokens_chunk, ".0f"),
                _f(figure(chunk, "seconds"), ".2f"),
                _f(tokens_kept, ".0f"),
                _f(figure(kept, "seconds"), ".2f"),
                _f(figure(kept, "lines"), ".1f"),
                _f(kb_kept, ".2f"),
                f"{check.get('problems')}/{check.get('warnings')}",
                *(keyscore.cells(f) if _on_key(data) else []),
            ]
        )
    return cells


def _on_key(data: WritesSummary) -> bool:
    return bool(obj(data["pooled"]).get("key"))


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def table(data: WritesSummary) -> Table:
    """A rich table: recall (all, distilled, verbatim lines), precision, junk lines (rate of the
    distilled lines), forged lines, cost per chunk and per kept fact, check problems/warnings."""
    from rich.table import Table

    s = data["settings"]
    where = f", sessions {s['sessions']}" if s.get("sessions") else ""
    t = Table(title=f"write quality: {s['benchmark']}, {s['model']} ({s['curates']}){where}")
    for col in (*COLUMNS, *(keyscore.KEY_COLUMNS if _on_key(data) else ())):
        t.add_column(col, justify="left" if col == "conversation" else "right")
    for cells in table_rows(data):
        t.add_row(*cells)
    return t


def label(data: WritesSummary) -> str:
    s = data["settings"]
    where = f" s{s['sessions']}" if s.get("sessions") else ""
    return f"{s['model']} {s['curates']} ({s['benchmark']}{where})"


def plot(runs: Sequence[WritesSummary], path: Path, names: Sequence[str] | None = None) -> None:
    """One point per run (a summary): distilled-line recall against seconds per chunk (left) and
    model tokens per chunk (right, symlog: the offline curator spends none); the recall of all
    lines hollow above it. A run without a reference (REALTALK) is drawn at its distilled-line
    precision instead, with a square. `names` label the runs (default: model, curation, slice).
    Seconds are on a log scale: the offline curator's tenths of a second and a local model's
    tens of seconds both stay readable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for i, data in enumerate(runs):
        pooled = data["pooled"]
        if pooled is None:
            continue
        chunk = obj(pooled.get("per_chunk"))
        tokens = (figure(chunk, "input_tokens") or 0) + (figure(chunk, "output_tokens") or 0)
        xs = (figure(chunk, "seconds") or 0.0, tokens)
        recall, recall_all = figure(pooled, "recall", "distilled"), figure(pooled, "recall", "all")
        has_recall = recall is not None
        y = recall if has_recall else figure(pooled, "precision", "distilled")
        name = (names[i] if names else label(data)) + ("" if has_recall else ": precision, no reference")
        for ax, x in zip(axes, xs, strict=True):
            ax.plot([x], [y if y is not None else 0.0], "o" if has_recall else "s", color=f"C{i}", label=name)
            if has_recall:
                ax.plot([x], [recall_all], "o", mfc="none", color=f"C{i}")
                ax.plot([x, x], [y, recall_all], ":", color=f"C{i}", lw=1)
    axes[0].set_xlabel("seconds per chunk (log)")
    axes[0].set_xscale("log")
    low, high = axes[0].get_xlim()
    axes[0].set_xlim(min(low, 0.05), max(high, 100.0))  # room for a model's tens of seconds
    axes[1].set_xlabel("model tokens per chunk (in + out; linear to 100, log above)")
    axes[1].set_xscale("symlog", linthresh=100)
    axes[1].set_xlim(left=-10)
    axes[1].set_xlim(right=max(1000.0, axes[1].get_xlim()[1]))
    for ax in axes:
        ax.set_ylabel("fact recall, distilled lines (hollow: all lines)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("memdir study bench writes: what each curator keeps, and what it costs")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def read_summary(folder: Path) -> WritesSummary:
    """A run folder's `summary.json`, each part narrowed to its kind (a part an older run lacks
    reads as empty)."""
    path = folder / SUMMARY
    try:
        data: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MemdirError(
            f"{path} cannot be read ({exc}); run `memdir study bench writes --out {folder}` first"
        ) from None
    if not isinstance(data, dict):
        raise MemdirError(
            f"{path} is not a JSON object; run `memdir study bench writes --out {folder}` again"
        )
    pooled = data.get("pooled")
    return WritesSummary(
        settings=dict(obj(data.get("settings"))),
        conversations={k: dict(obj(v)) for k, v in obj(data.get("conversations")).items()},
        pooled=dict(pooled) if isinstance(pooled, dict) else None,
        mean={k: figure(v) for k, v in obj(data.get("mean")).items()},
    )
