"""`memdir study report RUN`: a run folder's summary, report and plots drawn again from its
tables, for either study: a skill run holds tasks.jsonl, a conversational one summary.json."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report")
@click.argument("run", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--rerun-of",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="An earlier `memdir study eval` run of the same cells: the report adds each cell's "
    "composite (0.1 grounding + 0.6 correctness + 0.3 attribution) in both and the change in points.",
)
def report_cmd(run: Path, rerun_of: Path | None) -> None:
    """Redraw report.md and the plots of RUN, a run folder of `memdir study eval` or `memdir
    study skills` (a skill run's summary.json too)."""
    from memdir_study.skills.folder import TASKS

    if rerun_of is not None and not (rerun_of / "summary.json").is_file():
        raise click.ClickException(
            f"--rerun-of {rerun_of}: no summary.json there (a `memdir study eval` run)"
        )
    if (run / TASKS).is_file():
        if rerun_of is not None:
            raise click.ClickException("--rerun-of compares conversational runs; RUN is a skill run")
        from memdir_study.skills.report import write_report as write_skills

        write_skills(run)
        path = run / "report.md"
    elif (run / "summary.json").is_file():
        from memdir_study.eval.report import write_report as write_eval

        path = write_eval(run, rerun_of)
    else:
        raise click.ClickException(
            f"{run} is not a run folder: no {TASKS} (memdir study skills) or summary.json (memdir study eval)"
        )
    click.echo(f"report: {path}")


def register(group: click.Group) -> None:
    group.add_command(report_cmd)
