"""`memdir eval`: run (or resume) the conversational study into a run folder and print its table."""

from __future__ import annotations

import time

import click

from memdir.errors import MemdirError


@click.command("eval")
@click.option(
    "--benchmark", "-b", required=True, type=click.Choice(["locomo", "realtalk", "personamem", "generated"])
)
@click.option(
    "--conversation",
    "-c",
    default=None,
    help="Sample id(s), comma-separated (default: the study's sample of the benchmark).",
)
@click.option(
    "--variants",
    "-v",
    default="all",
    show_default=True,
    help="all, or a comma-separated list: closed-book, chunk-retrieval, verbatim-dump, foldered, "
    "reorg-preserve, reorg-condense, agent-curated.",
)
@click.option(
    "--model",
    "-m",
    default="offline",
    show_default=True,
    help="Model of both roles: provider/model (openai/gpt-5.4-mini, anthropic/...) or offline.",
)
@click.option("--builder-model", default=None, help="Model that builds stores (default: --model).")
@click.option("--search-model", default=None, help="Model that answers questions (default: --model).")
@click.option(
    "--judge",
    "-j",
    default="offline",
    show_default=True,
    help="offline (token F1 + lexical support; exact match for multiple choice) or a model name.",
)
@click.option(
    "--harness",
    type=click.Choice(["center", "center-bm25", "shell"]),
    default="center",
    show_default=True,
    help="The tool set both roles get (agent-curated builder and every search).",
)
@click.option("--price-card", default="gpt-5.4-mini", show_default=True, help="Rate card that prices tokens.")
@click.option(
    "--out", "-o", required=True, type=click.Path(file_okay=False), help="Run folder (resumed if it exists)."
)
@click.option(
    "--limit", type=int, default=None, help="At most N questions per cell (a quick run; resumable)."
)
@click.option("--in-flight", type=int, default=8, show_default=True, help="Questions answered at once.")
@click.option("--no-progress", is_flag=True, help="No progress bars.")
def eval_cmd(
    benchmark: str,
    conversation: str | None,
    variants: str,
    model: str,
    builder_model: str | None,
    search_model: str | None,
    judge: str,
    harness: str,
    price_card: str,
    out: str,
    limit: int | None,
    in_flight: int,
    no_progress: bool,
) -> None:
    """Build every variant's store, answer the benchmark's questions over it, judge, and write
    manifest.json, answers.jsonl, calls.jsonl, summary.json, report.md and plots to OUT."""
    from memdir.bench import DEFAULTS
    from memdir.eval.report import correctness_table, write_report
    from memdir.eval.runner import RunConfig, run_eval
    from memdir.variants import parse_variants

    try:
        convs = [c.strip() for c in (conversation or DEFAULTS[benchmark]).split(",") if c.strip()]
        config = RunConfig(
            benchmark,
            convs,
            parse_variants(variants),
            builder_model or model,
            search_model or model,
            judge,
            harness,
            price_card,
            in_flight,
            limit,
        )
        start = time.perf_counter()
        summary = run_eval(config, out, progress=not no_progress)
        report = write_report(out)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo("\n".join(correctness_table(summary["cells"])))
    for c in summary["cells"]:
        if c["reason"]:
            click.echo(f"{c['conversation']} / {c['variant']}: {c['status']}: {c['reason']}")
    click.echo(f"report: {report}  ({time.perf_counter() - start:.1f} s)")


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
