"""`memdir study data show`: what a benchmark sample holds (turns, sessions, chunks, questions)."""

from __future__ import annotations

import json
from typing import TypedDict

import click

from memdir.cli.renamed import Renamed
from memdir_study.bench import DEFAULTS, load_sample
from memdir_study.bench.types import Sample


class SampleCounts(TypedDict):
    """What `memdir study data show` prints of a sample."""

    benchmark: str
    sample: str
    speakers: list[str]
    sessions: int
    first_date: str | None
    last_date: str | None
    turns: int
    characters: int
    chunks: int
    questions: int
    by_category: dict[str, int]
    defective_golds: list[int]
    unresolved_evidence: int


def describe(sample: Sample) -> SampleCounts:
    """The counts a run record and a person both want to see first."""
    chunks = sample.chunks()
    return {
        "benchmark": sample.benchmark,
        "sample": sample.id,
        "speakers": sample.speakers,
        "sessions": len(sample.session_dates),
        "first_date": next((d for d in sample.session_dates.values() if d), None),
        "last_date": next((d for d in reversed(sample.session_dates.values()) if d), None),
        "turns": len(sample.turns),
        "characters": sum(len(t.text) for t in sample.turns),
        "chunks": len(chunks),
        "questions": len(sample.questions),
        "by_category": sample.categories(),
        "defective_golds": [q.order for q in sample.questions if q.defective],
        "unresolved_evidence": sum(len(v) for v in sample.unresolved_evidence().values()),
    }


@click.group("data")
def data_group() -> None:
    """Benchmark data: LoCoMo, REALTALK, PersonaMem (read from MEMDIR_DATA) and the generated one."""


@data_group.command("show")
@click.option("--benchmark", "-b", type=click.Choice(list(DEFAULTS)), default="locomo", show_default=True)
@click.option(
    "--conversation",
    "-c",
    "sample_id",
    default=None,
    help="Sample id (default: the study's sample, e.g. conv-50; generated: gen-s42, gen-s7-p4-n30-t10).",
)
@click.option("--head", type=int, default=0, help="Also print the first N turns as builders see them.")
@click.option(
    "--json", "as_json", cls=Renamed, old=("--as-json",), is_flag=True, help="Print the counts as JSON."
)
def show_cmd(benchmark: str, sample_id: str | None, head: int, as_json: bool) -> None:
    """Counts for one sample: turns, sessions, chunks and questions by category."""
    sample = load_sample(benchmark, sample_id)
    info = describe(sample)
    if as_json:
        click.echo(json.dumps(info, indent=2))
    else:
        for key, value in info.items():
            if key == "by_category":
                click.echo("by_category:")
                for cat, n in info["by_category"].items():
                    click.echo(f"  {cat}: {n}")
            else:
                click.echo(f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    for turn in sample.turns[:head]:
        click.echo(turn.render())


def register(cli: click.Group) -> None:
    cli.add_command(data_group)
