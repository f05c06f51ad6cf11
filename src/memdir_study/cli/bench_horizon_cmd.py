"""`memdir study bench horizon`: one store over a simulated year, scored at checkpoints.

The year is `memdir_study/bench/horizon/`, the run folder and its resume
`memdir_study/eval/horizon/run.py`, the figures `eval/horizon/score.py`, table and plots
`eval/horizon/report.py` (docs/horizon.md). This module reads the options, shows progress on
stderr and prints. `bench_cmd.py` adds it to the `bench` group.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import click

from memdir.agents.curation import CURATIONS, Curation
from memdir.cli.model_opts import endpoint_options, model_from_options, usage_line
from memdir.errors import MemdirError


@click.command("horizon")
@click.option(
    "--months", default=12, show_default=True, type=click.IntRange(1, 24), help="Months to simulate."
)
@click.option(
    "--sessions-per-month",
    default=20,
    show_default=True,
    type=click.IntRange(1, 28),
    help="Sessions a month (one in three a real LoCoMo or REALTALK session).",
)
@click.option(
    "--seed", default=1, show_default=True, type=int, help="The life's seed (same seed, same year)."
)
@click.option(
    "--model", "-m", "model_name", default="offline", show_default=True, help="The curator's model."
)
@endpoint_options
@click.option("--api-key-env", default=None, help="Environment variable holding the API key.")
@click.option(
    "--curation",
    type=click.Choice(CURATIONS),
    default="auto",
    show_default=True,
    help="agentic, split, or auto (split for the local model; offline curates by rule).",
)
@click.option(
    "--consolidate",
    type=click.Choice(["never", "monthly"]),
    default="never",
    show_default=True,
    help="monthly: the product's gated consolidation after each month (needs a model).",
)
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False), help="The run folder.")
@click.option("--json", "as_json", is_flag=True, help="Print summary.json on stdout (tables go to stderr).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def horizon_cmd(
    months: int, sessions_per_month: int, seed: int, model_name: str, base_url: str | None,
    tool_protocol: str | None, api_key_env: str | None, curation: str, consolidate: str, out: str,
    as_json: bool, no_progress: bool,
) -> None:  # fmt: skip
    """Build one store over a simulated year (a life whose facts change 0-3 times, woven with real
    LoCoMo and REALTALK sessions) through the product's ingest, and score it at months 1, 2, 3,
    6, 9 and 12: retention of month-1 facts, current- and previous-state accuracy, stale-first,
    update accuracy, shape and taxonomy, core memory, folder indexes and cost. Rows go to
    OUT/checkpoints.jsonl, the store of each checkpoint to OUT/checkpoints/; a rerun continues
    from the last checkpoint. Then OUT/summary.json and one OUT/horizon-<panel>.png per panel."""
    from rich.console import Console

    from memdir_study.eval.horizon import report
    from memdir_study.eval.horizon.run import MONTHS, HorizonRun, run_year
    from memdir_study.eval.progress import keyed_bars
    from memdir_study.runfolder import JsonlTable

    model = model_from_options(model_name, base_url, api_key_env, None, tool_protocol)
    run = HorizonRun(
        seed,
        months,
        sessions_per_month,
        model_name,
        cast(Curation, curation),
        consolidate,
        base_url,
        tool_protocol,
    )
    folder = Path(out)
    bar, tick = keyed_bars(lambda month: f"month {month}: sessions", disable=no_progress)

    try:
        with bar:
            rows = run_year(run, model, folder, say=bar.console.print, tick=tick)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    data = report.summary(rows, run.settings(model), JsonlTable(folder / MONTHS).rows())
    report.write_summary(folder, data)
    title = f"horizon seed {seed}, {model_name}"
    plots = report.plot(rows, folder, title)
    console = Console(stderr=as_json)
    if not console.is_terminal:  # a pipe or a file: 80 columns would cut the figures
        console = Console(stderr=as_json, width=220)
    console.print(report.table(rows, title))
    console.print(report.targets_table(data["targets"]))
    console.print(f"wrote {folder / report.SUMMARY} and {len(plots)} plots; {usage_line(model)}")
    if as_json:
        click.echo(json.dumps(data, indent=2))
