"""`memdir study ...`: the commands that reproduce the study. One rule places a command here:
it needs the study's benchmark data or writes and reads its run folders (`eval`, `skills`,
`report`, `data`, `bench`); a command over a user's store is the product's, at the top level."""

from __future__ import annotations

import click

from memdir.cli.topics import TopicGroup, Topics

# Each study topic module (under memdir_study.cli) and the commands its `register(group)` adds to
# `memdir study`; tests/cli/test_cli_topics.py holds this table to what each module registers.
STUDY_MODULES: Topics = (
    ("eval_cmd", ("eval",)),
    ("skills_cmd", ("skills",)),
    ("report_cmd", ("report",)),
    ("data_cmd", ("data",)),
    ("bench_cmd", ("bench",)),
)


@click.group("study", cls=TopicGroup, topics=STUDY_MODULES, package=__name__.rpartition(".")[0])
def study_group() -> None:
    """Reproduce the study: runs over the benchmarks (eval, skills), their reports, the benchmark
    data, and memdir's machinery measured on it (bench). docs/study.md has the design."""
