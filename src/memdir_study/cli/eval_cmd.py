"""`memdir study eval`: run (or resume) the conversational study into a run folder and print its table."""

from __future__ import annotations

import time
from dataclasses import replace

import click

from memdir.cli.model_opts import (
    build_models,
    endpoint_options,
    price_card_option,
    reasoning_effort_option,
    round_cap_option,
    tool_set_option,
)
from memdir.errors import MemdirError
from memdir_study.cli.executor_opts import check_executor, executor_options
from memdir_study.cli.slice_opts import sessions_value
from memdir_study.eval.model_settings import AGENTS, IN_FLIGHT, ROLES, default_in_flight


class _VariantsOption(click.Option):
    """`--variants`, its help written from the variants' registry when shown, so a variant is
    listed by registering it (memdir_study/variants/registry.py), not by editing this text."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from memdir_study.variants import variants_help

        self.help = variants_help()
        return super().get_help_record(ctx)


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
    cls=_VariantsOption,
    default="all",
    show_default=True,
)
@click.option(
    "--model",
    "-m",
    default="offline",
    show_default=True,
    help="Model of both roles: provider/model (openai/gpt-5.4-mini, anthropic/...), local, or offline.",
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
@tool_set_option(
    "The profiles both roles get: center (manage / search), center-bm25 (both with "
    "bm25_full_search) or shell (bash in the sandbox), for the agent-curated builder and every search."
)
@price_card_option(ROLES, "gpt-5.4-mini")
@reasoning_effort_option(ROLES, AGENTS, "builder and search high, judge low")
@click.option(
    "--out", "-o", required=True, type=click.Path(file_okay=False), help="Run folder (resumed if it exists)."
)
@click.option(
    "--questions",
    type=click.IntRange(min=0),
    default=None,
    help="At most N questions per cell, in evaluation order (a quick run; a later run without it "
    "completes the cells).",
)
@click.option(
    "--sessions",
    default=None,
    callback=sessions_value,
    help="Only sessions A-B (or N) of each conversation: their turns, and the questions whose "
    "evidence all lies in them (questions without evidence are dropped).",
)
@click.option(
    "--search",
    "search_kind",
    type=click.Choice(["agentic", "read"]),
    default="agentic",
    show_default=True,
    help="How the search model answers an open question over a store: agentic (the study's "
    "tool-using episode) or read (the top sections by search, then one constrained call citing "
    "the lines it was shown). Recorded in the manifest.",
)
@click.option(
    "--stores-from",
    "stores_from",
    default=None,
    metavar="RUN",
    help="Search the stores the run in folder RUN built instead of building them (no build step; "
    "the paper's Table 7 grid: any search model over one builder's stores). RUN must have built "
    "every cell asked for, with the same benchmark, sessions and tool set; the builder is RUN's. "
    "Recorded in the manifest with each store's digest.",
)
@endpoint_options
@round_cap_option
@click.option(
    "--in-flight",
    type=click.IntRange(min=1),
    default=None,
    help=f"Questions answered at once (default: {IN_FLIGHT}, or 1 when the search model or the judge "
    "is the local model, whose one server keeps one prompt's prefix cache).",
)
@click.option("--no-progress", is_flag=True, help="No progress bars.")
@executor_options
def eval_cmd(
    benchmark: str,
    conversation: str | None,
    variants: str,
    model: str,
    builder_model: str | None,
    search_model: str | None,
    judge: str,
    tool_set: str,
    price_card: tuple[str, dict[str, str]],
    reasoning_effort: dict[str, str | None],
    out: str,
    questions: int | None,
    sessions: str | None,
    search_kind: str,
    stores_from: str | None,
    base_url: str | None,
    tool_protocol: str | None,
    round_cap: int | None,
    in_flight: int | None,
    no_progress: bool,
    executor: str,
    address: str | None,
    cells_at_once: int | None,
) -> None:
    """Build every variant's store, answer the benchmark's questions over it, judge, and write
    manifest.json, answers.jsonl, calls.jsonl, summary.json, report.md and plots to OUT."""
    from memdir_study.bench import DEFAULTS
    from memdir_study.eval.report import correctness_table, write_report
    from memdir_study.eval.runner import RunConfig, run_eval
    from memdir_study.variants import parse_variants

    on_ray = check_executor(executor, address, cells_at_once)
    try:
        convs = [c.strip() for c in (conversation or DEFAULTS[benchmark]).split(",") if c.strip()]
        builder = builder_model or model
        if stores_from is not None:  # the stores are the source run's: so is their builder
            from memdir_study.eval.stores_from import StoreSource

            builder = builder_model or StoreSource.open(stores_from).builder_model
        config = RunConfig(
            benchmark=benchmark,
            conversations=convs,
            variants=parse_variants(variants),
            builder_model=builder,
            search_model=search_model or model,
            judge=judge,
            tool_set=tool_set,
            price_card=price_card[0],
            in_flight=in_flight or IN_FLIGHT,
            limit=questions,
            sessions=sessions,
            search=search_kind,
            stores_from=stores_from,
            reasoning_effort=reasoning_effort,
            role_cards=price_card[1],
        )
        builds = None if stores_from else config.builder_model  # a source's builder is never called
        models = build_models([builds, config.search_model, judge], base_url, tool_protocol, round_cap)
        if in_flight is None:
            asking = [models.get(config.search_model), models.get(judge)]
            config = replace(config, in_flight=default_in_flight([m for m in asking if m is not None]))
        cells = None
        if on_ray:
            from memdir_study.cluster import model_specs, require_ray
            from memdir_study.eval.ray_executor import RayExecutor

            require_ray()  # no extra, or a model no worker can build: refused before any write
            model_specs(models)
            cells = RayExecutor(address, cells_at_once=cells_at_once)
        start = time.perf_counter()
        summary = run_eval(config, out, progress=not no_progress, models=models, executor=cells)
        report = write_report(out)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo("\n".join(correctness_table(summary.cells)))
    for c in summary.cells:
        if c.reason:
            click.echo(f"{c.conversation} / {c.variant}: {c.status}: {c.reason}")
    click.echo(f"report: {report}  ({time.perf_counter() - start:.1f} s)")


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
