"""`memdir skills`: ALFWorld task chains whose stores learn from their own trajectories."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from memdir.errors import MemdirError

HARNESSES = ("center", "center-bm25", "shell")


def _retriever(harness: str) -> Any:
    from memdir.skills import retrieve

    if harness == "center":
        return retrieve.DEFAULT
    raise MemdirError(
        f"--harness {harness} is not available to the offline executor yet (it retrieves with grep "
        "through the center profile); use --harness center"
    )


@click.command("skills")
@click.option(
    "--variants",
    required=True,
    help="Comma-separated: no-store, episode-log, curated-skills, curated-skills-mem, curated-skills-mem-gs.",
)
@click.option(
    "--model",
    default="offline",
    show_default=True,
    help="Execution model; 'offline' is the no-model policy (a baseline).",
)
@click.option(
    "--curator-model", default=None, help="Model of the management agent (model-backed variants only)."
)
@click.option(
    "--protocol",
    type=click.Choice(["full", "three"]),
    default="full",
    show_default=True,
    help="One full chain of 140, or three chains with stores reset between them.",
)
@click.option(
    "--tasks",
    "n_tasks",
    type=click.IntRange(min=1),
    default=None,
    help="Run only the first N tasks of each chain.",
)
@click.option(
    "--harness",
    type=click.Choice(HARNESSES),
    default="center",
    show_default=True,
    help="Tool profile the roles use.",
)
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Run folder to write."
)
def skills_cmd(
    variants: str,
    model: str,
    curator_model: str | None,
    protocol: str,
    n_tasks: int | None,
    harness: str,
    out: Path,
) -> None:
    """Run task chains for each variant and write a run folder with summary, report and plots."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memdir.bench.alfworld import chains, load_games
    from memdir.skills.chain import check_model, run_chains
    from memdir.skills.report import write_report

    names = [v.strip() for v in variants.split(",") if v.strip()]
    check_model(model)
    if curator_model and curator_model != "offline":
        raise MemdirError("--curator-model needs the model-backed management agent (the agents issue)")
    retriever = _retriever(harness)
    total = sum(len(c) for c in chains(load_games(), protocol, n_tasks))
    solved: dict[str, int] = dict.fromkeys(names, 0)
    start = time.perf_counter()
    with Progress(
        TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        bars = {v: progress.add_task(v, total=total) for v in names}

        def on_task(row: dict[str, Any]) -> None:
            v = row["variant"]
            solved[v] += bool(row["success"])
            progress.update(bars[v], advance=1, description=f"{v} ({solved[v]} solved)")

        run_chains(
            out, names, model=model, protocol=protocol, n_tasks=n_tasks, retriever=retriever, on_task=on_task
        )
    cells = write_report(out)
    click.echo(f"{total} tasks x {len(names)} variants in {time.perf_counter() - start:.0f} s")
    for c in cells:
        click.echo(f"  {c['variant']:<22} success {100 * c['success']:.1f}%  mean steps {c['mean_steps']}")
    click.echo(f"report: {out / 'report.md'}")


@click.command("skills-report")
@click.argument("run", type=click.Path(file_okay=False, exists=True, path_type=Path))
def skills_report_cmd(run: Path) -> None:
    """Redraw summary.json, report.md and the plots of a skill run folder."""
    from memdir.skills.report import write_report

    write_report(run)
    click.echo(f"report: {run / 'report.md'}")


def register(cli: click.Group) -> None:
    cli.add_command(skills_cmd)
    cli.add_command(skills_report_cmd)
