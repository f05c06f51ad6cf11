"""report.md and PNG plots from a run folder, reading nothing but `summary.json` (the tables
of the study: correctness and attribution per variant; search cost per query by token
category; build cost and store profile) and `timings.json` (the wall times summary.json leaves
out), so a report can be rebuilt from a copied folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memdir.jsontypes import JsonValue, figure, obj
from memdir.models.usage import reasoning_share
from memdir_study.eval.composite import COMPOSITE_WEIGHTS, STUDY_SCALES
from memdir_study.eval.folder import TIMINGS
from memdir_study.eval.judges import SCALES
from memdir_study.eval.records import CellSummary, CellTimings, RunSummary, RunTimings, Score, ScoreColumn
from memdir_study.eval.report_tables import caching_table, composite_change_table, paired_table


def _pct(score: ScoreColumn | None, which: str = "all") -> str:
    return "—" if score is None else _mean(getattr(score, which))


def _mean(score: Score) -> str:
    return "—" if score.mean is None else f"{100 * score.mean:.1f}"


def _num(x: Any, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


Timings = dict[tuple[str, str, str], CellTimings]


def _seconds(c: CellSummary, times: Timings, which: str, old: float | None) -> str:
    """A wall time from timings.json; a summary written before the split carried it inline."""
    t = times.get(c.cell)
    seconds = getattr(t, which) if t is not None else old
    return "—" if seconds is None else f"{seconds:.1f}"


def _label(c: CellSummary, many: bool) -> str:
    return f"{c.conversation} / {c.variant}" if many else c.variant


def _many(cells: list[CellSummary]) -> bool:
    return len({c.conversation for c in cells}) > 1


def correctness_table(cells: list[CellSummary]) -> list[str]:
    many = _many(cells)
    cats = sorted({k for c in cells if c.correctness for k in c.correctness.by_category})
    lines = [
        "| variant | status | n | correctness | without defective golds | attribution | composite "
        "| cited gold evidence | " + " | ".join(cats) + (" |" if cats else "|"),
        "|---" * (8 + len(cats)) + "|",
    ]
    for c in cells:
        by = c.correctness.by_category if c.correctness else {}
        per = [_mean(by[k]) if k in by else "—" for k in cats]
        lines.append(
            f"| {_label(c, many)} | {c.status} | {c.n_questions} | {_pct(c.correctness)} | "
            f"{_pct(c.correctness, 'clean')} | {_pct(c.attribution)} | {_pct(c.composite)} | "
            f"{_pct(c.evidence_hit)} | " + " | ".join(per) + (" |" if per else "|")
        )
    return lines


def rsn(reasoning: float | None, output: float | None) -> str:
    """Rsn%: reasoning tokens over output tokens (the paper's Tables 2 and 10); `—` for a
    summary written before reasoning was kept, or nothing output."""
    share = None if reasoning is None or output is None else reasoning_share(reasoning, output)
    return "—" if share is None else f"{100 * share:.1f}"


def dump_ratio(c: CellSummary, cells: list[CellSummary]) -> str:
    """This cell's bytes read per question over the verbatim dump's on the same conversation
    (docs/study.md, design rule 1: what organizing a store saves its searcher); `—` without a
    dump cell that read something."""
    dump = next(
        (
            d
            for d in cells
            if d.variant == "verbatim-dump" and (d.benchmark, d.conversation) == (c.benchmark, c.conversation)
        ),
        None,
    )
    base = dump.search.bytes_read if dump is not None else None
    mine = c.search.bytes_read
    if not base or mine is None:
        return "—"
    return f"{mine / base:.2f}x"


def search_table(cells: list[CellSummary]) -> list[str]:
    many = _many(cells)
    lines = [
        "| variant | tool calls | rounds | KB read | read vs dump | uncached input | cached input | output "
        "| Rsn% | cents |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        s = c.search
        if s.tool_calls is None:
            continue
        lines.append(
            f"| {_label(c, many)} | {s.tool_calls:.1f} | {_num(s.rounds)} | "
            f"{_num(None if s.bytes_read is None else s.bytes_read / 1024)} | {dump_ratio(c, cells)} | "
            f"{_num(s.input_tokens, '{:.0f}')} | {_num(s.cached_tokens, '{:.0f}')} | "
            f"{_num(s.output_tokens, '{:.0f}')} | {rsn(s.reasoning_tokens, s.output_tokens)} | "
            f"{_num(None if s.cost_usd is None else 100 * s.cost_usd, '{:.3f}')} |"
        )
    return lines


def build_table(cells: list[CellSummary], times: Timings | None = None) -> list[str]:
    many = _many(cells)
    lines = [
        "| variant | tool calls | uncached input | cached input | output | Rsn% | $ | seconds "
        "| dirs | files | sections | KB | xrefs | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        b, st = c.build, c.store or {}
        lines.append(
            f"| {_label(c, many)} | {b.get('tool_calls', 0)} | {b.get('input_tokens', 0)} | "
            f"{b.get('cached_tokens', 0)} | {b.get('output_tokens', 0)} | "
            f"{rsn(figure(b, 'reasoning_tokens'), figure(b, 'output_tokens'))} | "
            f"{b.get('cost_usd', 0):.4f} | "
            f"{_seconds(c, times or {}, 'build_seconds', figure(b, 'seconds'))} | "
            f"{_num(st.get('dirs'), '{}')} | {_num(st.get('files'), '{}')} | "
            f"{_num(st.get('sections'), '{}')} | "
            f"{_num(st.get('kb'))} | {_num(st.get('xrefs'), '{}')} | "
            f"{check_text(c.checks) if c.status in ('ok', 'partial') else c.status} |"
        )
    return lines


def judge_table(cells: list[CellSummary], times: Timings | None = None) -> list[str]:
    """The judge's trust figures; empty without an LLM judge. A weak judge says CORRECT to
    anything: this is where the report shows it."""
    shown = [(c, c.judge_health) for c in cells if c.judge_health]
    if not shown:
        return []
    many = _many(cells)
    lines = [
        "## The judge against offline F1",
        "",
        "Agreement: the judge's CORRECT/WRONG matches F1 read as correct at F1 >= 0.5 "
        "(`judge_f1_agreement`, memdir's measure). Judge tokens and seconds are means per question.",
        "",
        "| variant | verdicts | unparsed | agreement | n | judge input | judge output | judge seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c, j in shown:
        agree = "—" if j.judge_f1_agreement is None else f"{100 * j.judge_f1_agreement:.0f}%"
        lines.append(
            f"| {_label(c, many)} | {j.verdicts} | {j.unparsed} | {agree} | {j.agreement_n} | "
            f"{j.input_tokens:.0f} | {j.output_tokens:.0f} | "
            f"{_seconds(c, times or {}, 'judge_seconds', j.seconds)} |"
        )
    return ["", *lines]


def attribution_table(cells: list[CellSummary]) -> list[str]:
    """Attribution on the paper's three scales, means over the answers the judge scored, with
    the two the study's composite reads (`composite.STUDY_SCALES`) named; empty without an LLM
    judge's scales."""
    shown = [(c, c.judge_health.scales) for c in cells if c.judge_health and c.judge_health.scales]
    if not shown:
        return []
    many = _many(cells)
    named = {scale: score for score, scale in STUDY_SCALES.items()}
    heads = [k.replace("_", " ") + (f" (= {named[k]})" if k in named else "") for k in SCALES]
    weights = " + ".join(f"{w} x {k}" for k, w in COMPOSITE_WEIGHTS.items())
    lines = [
        "## Attribution on the judge's three scales (%)",
        "",
        f"Composite (the correctness table's column) = {weights}.",
        "",
        f"| variant | scored | {' | '.join(heads)} |",
        "|---" * (2 + len(SCALES)) + "|",
    ]
    for c, sc in shown:
        cols = " | ".join(f"{100 * float(getattr(sc, k)):.1f}" for k in SCALES)
        lines.append(f"| {_label(c, many)} | {sc.n} | {cols} |")
    return ["", *lines]


def check_text(checks: Mapping[str, JsonValue]) -> str:
    if "foldering" in checks:
        f = obj(checks["foldering"])
        return f"move-only verified ({f['moved']} moved)"
    if "diff_facts" in checks:
        d = obj(checks["diff_facts"])
        ok = "all facts kept" if d["ok"] else f"{d['missing_count']} of {d['old_facts']} facts missing"
        return f"diff --facts: {ok}"
    return ""


def plot(cells: list[CellSummary], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [(c, c.correctness) for c in cells if c.correctness]
    if not shown:
        return []
    many = _many(cells)
    names = [_label(c, many) for c, _ in shown]
    files = []
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = list(range(len(shown)))
    corr = [100 * (k.all.mean or 0) for _, k in shown]
    attr = [100 * ((c.attribution.all.mean if c.attribution else None) or 0) for c, _ in shown]
    axes[0].bar([i - 0.2 for i in x], corr, 0.4, label="correctness")
    axes[0].bar([i + 0.2 for i in x], attr, 0.4, label="attribution")
    axes[0].set_ylabel("%")
    axes[0].set_ylim(0, 100)
    axes[0].legend()
    axes[0].set_title("Correctness and attribution")
    axes[1].bar(x, [(c.search.bytes_read or 0) / 1024 for c, _ in shown], color="gray")
    axes[1].set_ylabel("KB read per question")
    axes[1].set_title("Search cost per question")
    for ax in axes:
        ax.set_xticks(x, names, rotation=30, ha="right")
    first = shown[0][0]
    fig.suptitle(f"{first.benchmark}: search {first.model}, build {first.builder_model}, judge {first.judge}")
    fig.tight_layout()
    fig.savefig(out / "variants.png", dpi=110)
    plt.close(fig)
    files.append("variants.png")
    return files


def render(
    summary: RunSummary,
    plots: list[str],
    timings: RunTimings | None = None,
    rerun_of: tuple[str, RunSummary] | None = None,
) -> str:
    """report.md; `rerun_of` (a name and that run's summary) adds the composite's change from
    that run, cell by cell."""
    cells = summary.cells
    times: Timings = {t.cell: t for t in (timings.cells if timings else [])}
    first = cells[0] if cells else None
    head = [
        f"# {first.benchmark if first else '?'}: the conversational study",
        "",
        f"Search model `{first and first.model}`, builder model `{first and first.builder_model}`, judge "
        f"`{first and first.judge}`, tool set `{first and first.tool_set}`, price card "
        f"`{first and first.price_card}`.",
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
        *(composite_change_table(rerun_of[1], summary, rerun_of[0]) if rerun_of else []),
    ]
    notes = [f"- {c.conversation} / {c.variant}: **{c.status}**: {c.reason}" for c in cells if c.reason]
    if notes:
        head += ["", "## Cells not run or not complete", "", *notes]
    defective = sorted({q for c in cells for q in c.defective})
    if defective:
        head += ["", f"Defective golds left out of the second column: {', '.join(defective)}."]
    head += ["", *[f"![{p}]({p})" for p in plots]]
    return "\n".join(head) + "\n"


def write_report(run_dir: str | Path, rerun_of: str | Path | None = None) -> Path:
    """Draw report.md and the plots of a run folder again; `rerun_of`, another run folder of
    the same cells, adds the composite's run-to-run change."""
    out = Path(run_dir)
    summary = RunSummary.read(out / "summary.json")
    other = (Path(rerun_of).name, RunSummary.read(Path(rerun_of) / "summary.json")) if rerun_of else None
    timings_file = out / TIMINGS
    timings = RunTimings.read(timings_file) if timings_file.is_file() else None
    plots = plot(summary.cells, out)
    path = out / "report.md"
    path.write_text(render(summary, plots, timings, other), encoding="utf-8")
    return path
