"""`memdir study bench writes` and `memdir study bench writes-plot`: write quality, no model needed to score.

The figures are `memdir_study.eval.writes` (definitions: docs/metrics.md, "Write quality"); the run
folder, its resume and its rows are `memdir_study/eval/writes_run.py`; summary, table and plot are
`memdir_study/eval/writes_report.py`. This module reads the options, shows progress on stderr and prints.
`bench_cmd.py` adds both commands to the `bench` group beside `bench retrieval`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from memdir.agents.curation import CURATIONS, Curation
from memdir.cli.model_opts import endpoint_options, model_from_options, usage_line
from memdir.errors import MemdirError
from memdir.jsontypes import figure
from memdir_study.cli.slice_opts import sessions_value


def _ids(values: tuple[str, ...]) -> list[str] | None:
    found = [c.strip() for v in values for c in v.split(",") if c.strip()]
    return found or None


@click.command("writes")
@click.option(
    "--benchmark",
    "-b",
    required=True,
    type=click.Choice(["locomo", "realtalk", "generated", "key"]),
    help="key: the hand-checked truth key's turns (study/bench/truth_key.json), scored on its facts.",
)
@click.option(
    "--conversation",
    "-c",
    "conversations",
    multiple=True,
    help="A conversation id (repeat, or comma-separate); default: every one of the benchmark.",
)
@click.option(
    "--model", "-m", "model_name", required=True, help="The curator's model: offline, local, provider/model."
)
@endpoint_options
@click.option("--api-key-env", default=None, help="Environment variable holding the API key.")
@click.option(
    "--curation",
    type=click.Choice(CURATIONS),
    default="auto",
    show_default=True,
    help="agentic: the study's management episode; split: one constrained extraction call per chunk "
    "and filing by rule; auto: split for the local model, agentic for others (offline curates by rule).",
)
@click.option(
    "--sessions",
    default=None,
    callback=sessions_value,
    help="Only sessions A-B (or N) of each conversation, and the reference facts whose evidence lies "
    "in them.",
)
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False), help="The run folder.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print summary.json on stdout (the table goes to stderr)."
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option(
    "--rescore",
    is_flag=True,
    help="Score the stores OUT already holds again under today's rules (their build cost kept).",
)
def writes_cmd(
    benchmark: str, conversations: tuple[str, ...], model_name: str, base_url: str | None,
    tool_protocol: str | None, api_key_env: str | None, curation: str, sessions: str | None,
    out: str, as_json: bool, no_progress: bool, rescore: bool,
) -> None:  # fmt: skip
    """Build each conversation's store with the curator (OUT/stores/<id>, journaled like `memdir
    ingest`) and score what it wrote, with no model: fact recall against LoCoMo's observations
    (distilled and verbatim lines apart), precision (supported by the cited turns, not junk),
    junk and forged lines, and the cost per chunk and per kept fact. Rows go to OUT/writes.jsonl
    as each conversation finishes (a rerun skips those), then OUT/summary.json and OUT/writes.png."""
    from rich.console import Console

    from memdir_study.eval import writes_report as report
    from memdir_study.eval.progress import keyed_bars
    from memdir_study.eval.updates_run import summary_line
    from memdir_study.eval.writes_run import WritesRun, run_writes

    model = model_from_options(model_name, base_url, api_key_env, None, tool_protocol)
    run = WritesRun(benchmark, model_name, cast(Curation, curation), sessions, base_url, tool_protocol)
    folder = Path(out)
    bar, tick = keyed_bars(lambda conversation: f"{benchmark} {conversation}: chunks", disable=no_progress)

    try:
        with bar:
            found = run_writes(
                run, model, _ids(conversations), folder, tick=tick, say=bar.console.print, rescore=rescore
            )
            data = report.summary(found, run.settings(model))
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    report.write_summary(folder, data)
    report.plot([data], folder / report.PLOT)
    console = Console(stderr=as_json)
    if not console.is_terminal:  # a pipe or a file: 80 columns would cut the figures
        console = Console(stderr=as_json, width=180)
    console.print(report.table(data))
    updated = summary_line(data["pooled"] or {})
    if updated:
        console.print(updated)
    console.print(f"wrote {folder / 'writes.jsonl'}, summary.json and {report.PLOT}; {usage_line(model)}")
    if as_json:
        click.echo(json.dumps(data, indent=2))


@click.command("writes-plot")
@click.argument("folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="The PNG to write.")
def writes_plot_cmd(folders: tuple[str, ...], out: str) -> None:
    """Plot several `bench writes` runs (their FOLDERS: offline, local agentic, local split, ...)
    on one figure: recall against cost, a point per run."""
    from memdir_study.eval import writes_report as report

    try:
        runs = [report.read_summary(Path(f)) for f in folders]
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    names = [f"{report.label(d)} [{Path(f).name}]" for d, f in zip(runs, folders, strict=True)]
    report.plot(runs, Path(out), names)
    for data in runs:
        recall = figure(data["pooled"], "recall", "distilled")
        per_chunk = figure(data["pooled"], "per_chunk", "seconds")
        click.echo(f"{report.label(data)}: distilled recall {recall}, {per_chunk} s/chunk")
    click.echo(f"wrote {out}")
