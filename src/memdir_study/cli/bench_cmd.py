"""`memdir study bench retrieval`: retrieval quality per search mode, without any LLM (and the `bench`
group, which also holds `bench writes`, write quality: `bench_writes_cmd.py`).

The figures come from `memdir_study.eval.retrieval` (definitions in its docstring); this module picks
the samples, shows progress on stderr, prints one table per benchmark, and writes
`retrieval.json` (every figure: per conversation, averaged over conversations, pooled over
questions) and `retrieval.png` (recall@k any against k) into the run folder. The tables show
the figures averaged over conversations, each conversation weighing the same, as the issue's
targets are stated.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import click

from memdir.cli.renamed import Renamed
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, JsonValue, array, count, figure, obj

if TYPE_CHECKING:
    from rich.table import Table

    from memdir_study.eval.retrieval import ConversationResult

BENCHMARKS = ("locomo", "realtalk")  # what `all` runs; longmemeval only when named (hundreds of MB)
SECTION_COLUMNS = ("store / mode", "questions", "R@1", "R@3", "R@5", "R@10", "top-5 KB", "build s", "ms p50")
CHUNK_COLUMNS = (
    *("mode", "questions", "R@1", "R@3", "R@5", "R@10", "R@5 all"),
    *("session R@5", "nDCG@10", "build s", "ms p50"),
)


def samples(benchmark: str, ids: Sequence[str] | None) -> list[Any]:
    """The benchmark's samples (every one, or those of `ids` it has), in its own order."""
    from memdir_study.bench import load_sample

    if benchmark == "longmemeval":
        from memdir_study.bench import longmemeval

        found = longmemeval.load_all()  # DataUnavailable, saying where to put the file
        return [s for s in found if ids is None or s.id in ids]
    from memdir_study.bench import locomo, realtalk

    known = locomo.sample_ids() if benchmark == "locomo" else realtalk.sample_ids()
    return [load_sample(benchmark, c) for c in known if ids is None or c in ids]


class RetrievalRecord(TypedDict):
    """`retrieval.json`: per benchmark its figures (`retrieval.aggregate`, plus each
    conversation's), the benchmarks skipped and why, the run's settings and what was reused."""

    benchmarks: dict[str, JsonObject]
    unavailable: dict[str, str]
    settings: JsonObject
    reused: list[str]
    counting: str
    table_shows: str
    wall_seconds: float


def sessions_hook(benchmark: str) -> Callable[[Any, Any], set[int]] | None:
    """LongMemEval scores sessions against its own answer sessions; the others use evidence."""
    if benchmark != "longmemeval":
        return None
    from memdir_study.bench.longmemeval import answer_sessions

    return lambda sample, _question: answer_sessions(sample)


def run_retrieval(
    benchmarks: Sequence[str],
    conversations: Sequence[str] | None,
    modes: Sequence[str],
    questions: int | None,
    sections: bool,
    out: Path,
    progress: bool = True,
    fresh: bool = False,
) -> RetrievalRecord:
    """Run every benchmark, write retrieval.json and retrieval.png to `out`, return the record.
    Each conversation's raw figures go to `out/conversations/` as it finishes, and a later run
    with the same settings reads them back instead of measuring again (unless `fresh`): a run
    stopped half way resumes."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memdir.search.embed import configured
    from memdir_study.bench.data import DataUnavailable
    from memdir_study.eval import retrieval as rt

    start = time.perf_counter()
    loaded: dict[str, list[Any]] = {}
    unavailable: dict[str, str] = {}
    for b in benchmarks:
        try:
            loaded[b] = samples(b, conversations)
        except DataUnavailable as exc:
            unavailable[b] = str(exc)
    if conversations is not None:
        have = {s.id for found in loaded.values() for s in found}
        missing = [c for c in conversations if c not in have]
        if missing:
            raise MemdirError(f"no benchmark of {', '.join(benchmarks)} has {', '.join(missing)}")
    per_q = len(modes) + (2 * sum(m in rt.SECTION_MODES for m in modes) if sections else 0)
    total = sum(len(rt.counted(s, questions)) * per_q for found in loaded.values() for s in found)
    per_benchmark: dict[str, JsonObject] = {}
    key: JsonObject = {"modes": list(modes), "questions": questions, "sections": sections}
    embedder = configured() if any(m not in ("files", "bm25") for m in modes) else None
    key |= {"units_asked": rt.UNITS_ASKED, "files_asked": rt.FILES_ASKED, "embedder": embedder}
    if fresh:
        shutil.rmtree(out / "conversations", ignore_errors=True)
    reused: list[str] = []
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not progress,
    )
    with bar:
        task = bar.add_task("retrieval", total=total)
        for b, found in loaded.items():
            results = []
            for s in found:
                label = f"{b} {s.id}"

                def tick(stage: str, label: str = label) -> None:
                    bar.update(task, advance=1, description=f"{label}: {stage}")

                cached = out / "conversations" / f"{b}-{s.id}.json"
                result = _cached(cached, key)
                if result is None:
                    began = time.perf_counter()
                    with tempfile.TemporaryDirectory(prefix="memdir-retrieval-") as tmp:
                        hook = sessions_hook(b) or rt.evidence_sessions
                        result = rt.evaluate(
                            s,
                            Path(tmp),
                            modes,
                            questions=questions,
                            sections=sections,
                            sessions_of=hook,
                            tick=tick,
                        )
                    cached.parent.mkdir(parents=True, exist_ok=True)
                    cached.write_text(json.dumps({"key": key, "result": rt.raw(result)}) + "\n", "utf-8")
                    done = f"{time.perf_counter() - began:.0f} s"
                else:
                    reused.append(f"{b} {s.id}")
                    bar.update(task, advance=len(rt.counted(s, questions)) * per_q)
                    done = f"reused from {cached}"
                results.append(result)
                if progress:
                    n = next(iter(result.chunk.values())).questions
                    bar.console.print(f"{label}: {n} questions, {done}")
            summary = rt.aggregate(results)
            summary["per_conversation"] = [r.as_json() for r in results]
            per_benchmark[b] = summary
    settings: JsonObject = {
        "modes": list(modes),
        "questions_cap": questions,
        "sections": sections,
        "units_asked": rt.UNITS_ASKED,
        "files_asked": rt.FILES_ASKED,
        "embedder": embedder,
        "embed_threads": os.environ.get("MEMDIR_EMBED_THREADS", "1"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    record = RetrievalRecord(
        benchmarks=per_benchmark,
        unavailable=unavailable,
        settings=settings,
        reused=reused,  # conversations read back from an earlier, stopped run of the same settings
        counting=(
            "a question counts when its evidence names a turn of the sample (LoCoMo's category 5 is "
            "left out by its loader; LongMemEval's _abs items too); see memdir_study.eval.retrieval"
        ),
        table_shows="mean over conversations (each weighs the same); 'pooled' is over questions",
        wall_seconds=round(time.perf_counter() - start, 1),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "retrieval.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    if record["benchmarks"]:
        plot(record, out / "retrieval.png")
    return record


def _cached(path: Path, key: JsonObject) -> ConversationResult | None:
    """The conversation's result from an earlier run with the same settings, else None."""
    from memdir_study.eval.retrieval import from_raw, mode_named

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        recorded = {**data["key"], "modes": [mode_named(m) for m in data["key"]["modes"]]}
        return from_raw(data["result"]) if recorded == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _pct(summary: JsonValue, key: str) -> str:
    value = figure(summary, "mean", key)
    return "" if value is None else f"{value:.3f}"


def _num(s: JsonValue, key: str, fmt: str) -> str:
    return format(figure(s, key) or 0, fmt)


def tables(record: RetrievalRecord) -> list[Table]:
    """Per benchmark: the chunk table, then the section table (when there is a section level)."""
    from rich.table import Table

    out: list[Table] = []
    for b, summary in record["benchmarks"].items():
        n = len(array(summary["conversations"]))
        t = Table(title=f"{b}: chunk retrieval, {n} conversation(s), mean over conversations")
        for col in CHUNK_COLUMNS:
            t.add_column(col, justify="left" if col == "mode" else "right")
        for mode, s in obj(summary["chunk"]).items():
            t.add_row(
                mode,
                str(count(obj(s).get("questions"))),
                *(_pct(s, f"any@{k}") for k in (1, 3, 5, 10)),
                _pct(s, "all@5"),
                _pct(s, "session_any@5"),
                _pct(s, "ndcg@10"),
                _num(s, "build_seconds", ".2f"),
                _num(s, "ms_p50", ".1f"),
            )
        out.append(t)
        if summary["sections"]:
            t = Table(title=f"{b}: search by section, curated (offline curator) vs verbatim dump")
            for col in SECTION_COLUMNS:
                t.add_column(col, justify="left" if col == "store / mode" else "right")
            for store, by_mode in obj(summary["sections"]).items():
                for mode, s in obj(by_mode).items():
                    t.add_row(
                        f"{store} {mode}",
                        str(count(obj(s).get("questions"))),
                        *(_pct(s, f"any@{k}") for k in (1, 3, 5, 10)),
                        f"{(figure(s, 'mean', 'top5_bytes') or 0) / 1024:.1f}",
                        _num(s, "build_seconds", ".2f"),
                        _num(s, "ms_p50", ".1f"),
                    )
            out.append(t)
    return out


def plot(record: RetrievalRecord, path: Path) -> None:
    """Recall@k (any, mean over conversations) against k: a panel per benchmark, a line per mode
    (chunk level solid; search by section dashed for the curated store, dotted for the dump)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memdir_study.eval.retrieval import CHUNK_MODES

    ks = (1, 3, 5, 10)
    found = record["benchmarks"]
    fig, axes = plt.subplots(1, len(found), figsize=(5.5 * len(found), 4.5), squeeze=False)
    for ax, (b, summary) in zip(axes[0], found.items(), strict=True):
        lines = [(m, m, "-o", obj(s)) for m, s in obj(summary["chunk"]).items()]
        for store, style in (("curated", "--s"), ("dump", ":^")):
            by_mode = obj(obj(summary["sections"]).get(store))
            lines += [(f"{store} {m}", m, style, obj(s)) for m, s in by_mode.items()]
        for name, mode, style, s in lines:  # a colour per mode, a line style per store
            if "mean" in s:
                color = f"C{CHUNK_MODES.index(mode)}" if mode in CHUNK_MODES else None
                ax.plot(ks, [figure(s, "mean", f"any@{k}") for k in ks], style, color=color, label=name)
        ax.set_xticks(ks)
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k (any evidence turn)")
        ax.set_ylim(0, 1)
        n = len(array(summary["conversations"]))
        ax.set_title(f"{b}: {n} conversations, {summary['questions']} questions")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # off the lines
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def json_figures(record: RetrievalRecord) -> dict[str, JsonObject]:
    """What `--json` prints: per benchmark, the per-mode figures without the per-conversation rows."""
    return {
        b: {k: v for k, v in s.items() if k != "per_conversation"} for b, s in record["benchmarks"].items()
    }


def _modes(ctx: click.Context, param: click.Parameter, value: str) -> list[str]:
    from memdir_study.eval.retrieval import CHUNK_MODES, mode_named

    if value == "all":
        return list(CHUNK_MODES)
    chosen = [mode_named(m.strip()) for m in value.split(",") if m.strip()]
    bad = [m for m in chosen if m not in CHUNK_MODES]
    if bad or not chosen:
        raise click.BadParameter(
            f"{', '.join(bad) or value!r}: choose all or some of {', '.join(CHUNK_MODES)}"
        )
    return chosen


@click.group("bench")
def bench() -> None:
    """Measure memdir's own machinery on the benchmarks, without any LLM."""


@bench.command("retrieval")
@click.option(
    "--benchmark",
    "-b",
    type=click.Choice([*BENCHMARKS, "longmemeval", "all"]),
    default="all",
    show_default=True,
    help="all = locomo and realtalk; longmemeval needs its file under MEMDIR_DATA.",
)
@click.option(
    "--conversation",
    "-c",
    "conversations",
    cls=Renamed,
    old=("--conversations",),
    default=None,
    help="Sample ids, comma-separated (default: every one).",
)
@click.option(
    "--modes",
    default="all",
    show_default=True,
    callback=_modes,
    help="all, or some of files, bm25, dense, hybrid, hybrid-convex.",
)
@click.option(
    "--questions", type=click.IntRange(min=1), default=None, help="At most N questions per conversation."
)
@click.option("--no-sections", is_flag=True, help="Skip the section level (offline-curated store vs dump).")
@click.option("--out", "-o", default="runs/retrieval", show_default=True, type=click.Path(file_okay=False))
@click.option(
    "--json", "as_json", is_flag=True, help="Per-mode figures as JSON on stdout (tables go to stderr)."
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--fresh", is_flag=True, help="Measure every conversation again (default: resume OUT).")
def retrieval_cmd(
    benchmark: str,
    conversations: str | None,
    modes: list[str],
    questions: int | None,
    no_sections: bool,
    out: str,
    as_json: bool,
    no_progress: bool,
    fresh: bool,
) -> None:
    """Rank the evidence of every question by each search mode and score the rankings: recall@k
    (any / all evidence turns), session recall, nDCG@10, per category, timings; then the same
    by section over the offline-curated store and the verbatim dump. Writes retrieval.json and
    retrieval.png to OUT."""
    from rich.console import Console

    from memdir.search.embed import embedder_missing

    if any(m not in ("files", "bm25") for m in modes) and (why := embedder_missing()):
        raise click.ClickException(f"{why} (or run with --modes files,bm25)")
    chosen = list(BENCHMARKS) if benchmark == "all" else [benchmark]
    ids = [c.strip() for c in conversations.split(",") if c.strip()] if conversations else None
    try:
        record = run_retrieval(
            chosen, ids, modes, questions, not no_sections, Path(out), not no_progress, fresh
        )
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    if not record["benchmarks"]:
        raise click.ClickException("; ".join(record["unavailable"].values()) or "nothing to run")
    console = Console(stderr=as_json)
    if not console.is_terminal:  # a pipe or a file: 80 columns would cut the figures
        console = Console(stderr=as_json, width=150)
    for name, why in record["unavailable"].items():
        Console(stderr=True).print(f"{name}: skipped, {why}")
    for t in tables(record):
        console.print(t)
    console.print(f"wrote {Path(out) / 'retrieval.json'} and retrieval.png ({record['wall_seconds']} s)")
    if as_json:
        click.echo(json.dumps(json_figures(record), indent=2))


def register(cli: click.Group) -> None:
    from memdir_study.cli.bench_horizon_cmd import horizon_cmd
    from memdir_study.cli.bench_writes_cmd import writes_cmd, writes_plot_cmd

    bench.add_command(writes_cmd)
    bench.add_command(writes_plot_cmd)
    bench.add_command(horizon_cmd)
    cli.add_command(bench)
