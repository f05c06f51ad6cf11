"""report.md and PNG plots from a run folder, reading nothing but `summary.json` (the tables
of the study: correctness and attribution per variant; search cost per query by token
category; build cost and store profile) and `timings.json` (the wall times summary.json leaves
out), so a report can be rebuilt from a copied folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memdir.models.usage import reasoning_share
from memdir.study.eval.folder import TIMINGS
from memdir.study.eval.judges import GROUNDING_WEIGHTS, grounding
from memdir.study.eval.report_tables import caching_table, paired_table


def _pct(score: dict[str, Any] | None, which: str = "all") -> str:
    if not score or score[which]["mean"] is None:
        return "—"
    return f"{100 * score[which]['mean']:.1f}"


def _num(x: Any, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


Timings = dict[tuple[str, str, str], dict[str, Any]]


def _key(c: dict[str, Any]) -> tuple[str, str, str]:
    return (c.get("benchmark", ""), c["conversation"], c["variant"])


def _seconds(c: dict[str, Any], times: Timings, which: str, old: Any) -> str:
    """A wall time from timings.json; a summary written before the split carried it inline."""
    t = times.get(_key(c), {}).get(which, old)
    return "—" if t is None else f"{t:.1f}"


def _label(c: dict[str, Any], many: bool) -> str:
    return f"{c['conversation']} / {c['variant']}" if many else c["variant"]


def correctness_table(cells: list[dict[str, Any]]) -> list[str]:
    many = len({c["conversation"] for c in cells}) > 1
    cats = sorted({k for c in cells if c["correctness"] for k in c["correctness"]["by_category"]})
    lines = [
        "| variant | status | n | correctness | without defective golds | attribution "
        "| cited gold evidence | " + " | ".join(cats) + (" |" if cats else "|"),
        "|---" * (7 + len(cats)) + "|",
    ]
    for c in cells:
        by = c["correctness"]["by_category"] if c["correctness"] else {}
        per = [_pct({"all": by[k]}) if k in by else "—" for k in cats]
        lines.append(
            f"| {_label(c, many)} | {c['status']} | {c['n_questions']} | {_pct(c['correctness'])} | "
            f"{_pct(c['correctness'], 'clean')} | {_pct(c['attribution'])} | {_pct(c.get('evidence_hit'))} | "
            + " | ".join(per)
            + (" |" if per else "|")
        )
    return lines


def rsn(tokens: dict[str, Any]) -> str:
    """Rsn%: reasoning tokens over output tokens (the paper's Tables 2 and 10); `—` for a
    summary written before reasoning was kept, or nothing output."""
    reasoning, output = tokens.get("reasoning_tokens"), tokens.get("output_tokens")
    share = None if reasoning is None or output is None else reasoning_share(reasoning, output)
    return "—" if share is None else f"{100 * share:.1f}"


def dump_ratio(c: dict[str, Any], cells: list[dict[str, Any]]) -> str:
    """This cell's bytes read per question over the verbatim dump's on the same conversation
    (docs/study.md, design rule 1: what organizing a store saves its searcher); `—` without a
    dump cell that read something."""
    dump = next(
        (
            d
            for d in cells
            if d["variant"] == "verbatim-dump"
            and (d["benchmark"], d["conversation"]) == (c["benchmark"], c["conversation"])
        ),
        None,
    )
    base = (dump or {}).get("search", {}).get("bytes_read")
    mine = c["search"].get("bytes_read")
    if not base or mine is None:
        return "—"
    return f"{mine / base:.2f}x"


def search_table(cells: list[dict[str, Any]]) -> list[str]:
    many = len({c["conversation"] for c in cells}) > 1
    lines = [
        "| variant | tool calls | rounds | KB read | read vs dump | uncached input | cached input | output "
        "| Rsn% | cents |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        s = c["search"]
        if s.get("tool_calls") is None:
            continue
        lines.append(
            f"| {_label(c, many)} | {s['tool_calls']:.1f} | {s['rounds']:.1f} | "
            f"{s['bytes_read'] / 1024:.1f} | {dump_ratio(c, cells)} | "
            f"{s['input_tokens']:.0f} | {s['cached_tokens']:.0f} | {s['output_tokens']:.0f} | {rsn(s)} | "
            f"{100 * s['cost_usd']:.3f} |"
        )
    return lines


def build_table(cells: list[dict[str, Any]], times: Timings | None = None) -> list[str]:
    many = len({c["conversation"] for c in cells}) > 1
    lines = [
        "| variant | tool calls | uncached input | cached input | output | Rsn% | $ | seconds "
        "| dirs | files | sections | KB | xrefs | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        b, st = c["build"], c["store"] or {}
        lines.append(
            f"| {_label(c, many)} | {b.get('tool_calls', 0)} | {b.get('input_tokens', 0)} | "
            f"{b.get('cached_tokens', 0)} | {b.get('output_tokens', 0)} | {rsn(b)} | "
            f"{b.get('cost_usd', 0):.4f} | "
            f"{_seconds(c, times or {}, 'build_seconds', b.get('seconds'))} | "
            f"{_num(st.get('dirs'), '{}')} | {_num(st.get('files'), '{}')} | "
            f"{_num(st.get('sections'), '{}')} | "
            f"{_num(st.get('kb'))} | {_num(st.get('xrefs'), '{}')} | "
            f"{check_text(c['checks']) if c['status'] in ('ok', 'partial') else c['status']} |"
        )
    return lines


def judge_table(cells: list[dict[str, Any]], times: Timings | None = None) -> list[str]:
    """The judge's trust figures; empty without an LLM judge. A weak judge says CORRECT to
    anything: this is where the report shows it."""
    shown = [c for c in cells if c.get("judge_health")]
    if not shown:
        return []
    many = len({c["conversation"] for c in cells}) > 1
    lines = [
        "## The judge against offline F1",
        "",
        "Agreement: the judge's CORRECT/WRONG matches F1 read as correct at F1 >= 0.5 "
        "(`judge_f1_agreement`, memdir's measure). Judge tokens and seconds are means per question.",
        "",
        "| variant | verdicts | unparsed | agreement | n | judge input | judge output | judge seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in shown:
        j = c["judge_health"]
        agree = "—" if j["judge_f1_agreement"] is None else f"{100 * j['judge_f1_agreement']:.0f}%"
        lines.append(
            f"| {_label(c, many)} | {j['verdicts']} | {j['unparsed']} | {agree} | {j['agreement_n']} | "
            f"{j['input_tokens']:.0f} | {j['output_tokens']:.0f} | "
            f"{_seconds(c, times or {}, 'judge_seconds', j.get('seconds'))} |"
        )
    return ["", *lines]


def attribution_table(cells: list[dict[str, Any]]) -> list[str]:
    """Attribution on the paper's three scales, means over the answers the judge scored, and
    the grounding composite they make (the correctness table's attribution column, which also
    counts unparsed replies as unscored); empty without an LLM judge's scales."""
    shown = [c for c in cells if (c.get("judge_health") or {}).get("scales")]
    if not shown:
        return []
    many = len({c["conversation"] for c in cells}) > 1
    lines = [
        "## Attribution on the judge's three scales (%)",
        "",
        "Grounding = 0.1 x citation correctness + 0.6 x relevance + 0.3 x coherent aggregation.",
        "",
        "| variant | scored | citation correctness | relevance | coherent aggregation | grounding |",
        "|---|---|---|---|---|---|",
    ]
    for c in shown:
        sc = c["judge_health"]["scales"]
        parts = {k: sc[k] for k in GROUNDING_WEIGHTS}
        cols = " | ".join(f"{100 * v:.1f}" for v in parts.values())
        lines.append(f"| {_label(c, many)} | {sc['n']} | {cols} | {100 * grounding(parts):.1f} |")
    return ["", *lines]


def check_text(checks: dict[str, Any]) -> str:
    if "foldering" in checks:
        f = checks["foldering"]
        return f"move-only verified ({f['moved']} moved)"
    if "diff_facts" in checks:
        d = checks["diff_facts"]
        ok = "all facts kept" if d["ok"] else f"{d['missing_count']} of {d['old_facts']} facts missing"
        return f"diff --facts: {ok}"
    return ""


def plot(cells: list[dict[str, Any]], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [c for c in cells if c["correctness"]]
    if not shown:
        return []
    many = len({c["conversation"] for c in cells}) > 1
    names = [_label(c, many) for c in shown]
    files = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = list(range(len(shown)))
    corr = [100 * (c["correctness"]["all"]["mean"] or 0) for c in shown]
    attr = [100 * ((c["attribution"] or {}).get("all", {}).get("mean") or 0) for c in shown]
    axes[0].bar([i - 0.2 for i in x], corr, 0.4, label="correctness")
    axes[0].bar([i + 0.2 for i in x], attr, 0.4, label="attribution")
    axes[0].set_ylabel("%")
    axes[0].set_ylim(0, 100)
    axes[0].legend()
    axes[0].set_title("Correctness and attribution")
    axes[1].bar(x, [c["search"]["bytes_read"] / 1024 for c in shown], color="gray")
    axes[1].set_ylabel("KB read per question")
    axes[1].set_title("Search cost per question")
    for ax in axes:
        ax.set_xticks(x, names, rotation=30, ha="right")
    first = shown[0]
    fig.suptitle(
        f"{first['benchmark']}: search {first['model']}, build {first['builder_model']}, "
        f"judge {first['judge']}"
    )
    fig.tight_layout()
    fig.savefig(out / "variants.png", dpi=110)
    plt.close(fig)
    files.append("variants.png")
    return files


def render(summary: dict[str, Any], plots: list[str], timings: dict[str, Any] | None = None) -> str:
    cells = summary["cells"]
    times: Timings = {_key(t): t for t in (timings or {}).get("cells", [])}
    first = cells[0] if cells else {}
    tool_set = first.get("tool_set", first.get("harness"))  # `harness` in summaries before the rename
    head = [
        f"# {first.get('benchmark', '?')}: the conversational study",
        "",
        f"Search model `{first.get('model')}`, builder model `{first.get('builder_model')}`, judge "
        f"`{first.get('judge')}`, tool set `{tool_set}`, price card `{first.get('price_card')}`.",
        "",
        "## Correctness and attribution per variant (%)",
        "",
        *correctness_table(cells),
        "",
        "## Search cost per query, by token category (means per question)",
        "",
        *search_table(cells),
        "",
        "read vs dump: KB read per question divided by the verbatim dump's on the same conversation.",
        "",
        "## Build cost and store profile",
        "",
        *build_table(cells, times),
        *judge_table(cells, times),
        *attribution_table(cells),
        *caching_table(cells),
        *paired_table(summary),
    ]
    notes = [
        f"- {c['conversation']} / {c['variant']}: **{c['status']}**: {c['reason']}"
        for c in cells
        if c["reason"]
    ]
    if notes:
        head += ["", "## Cells not run or not complete", "", *notes]
    defective = sorted({q for c in cells for q in c.get("defective", [])})
    if defective:
        head += ["", f"Defective golds left out of the second column: {', '.join(defective)}."]
    head += ["", *[f"![{p}]({p})" for p in plots]]
    return "\n".join(head) + "\n"


def write_report(run_dir: str | Path) -> Path:
    out = Path(run_dir)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    timings_file = out / TIMINGS
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.is_file() else None
    plots = plot(summary["cells"], out)
    path = out / "report.md"
    path.write_text(render(summary, plots, timings), encoding="utf-8")
    return path
