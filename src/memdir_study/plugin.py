"""The study as a memdir plugin (`memdir/plugins.py`, the entry point `study` of the group
`memdir.plugins` in pyproject.toml): it adds `memdir study ...` and the run pages of
`memdir ui`. Importing this module loads nothing of the study itself, so `memdir --help` stays
quick; it only checks that the study's own dependencies (the `study` extra) are installed, so
that without them `memdir study` says how to install them instead of failing mid-command."""

from __future__ import annotations

from importlib.util import find_spec

import click

from memdir.plugins import UIPages, hookimpl

# The third-party packages only the study imports: the `study` extra of pyproject.toml.
NEEDS = ("nltk", "pydantic")
missing = [name for name in NEEDS if find_spec(name) is None]
if missing:
    raise ImportError(f"the study needs {', '.join(missing)}: pip install 'memdir[study]'")


@hookimpl
def register_commands(cli: click.Group) -> None:
    from memdir_study.cli.study_cmds import study_group

    cli.add_command(study_group)


@hookimpl
def register_ui(pages: UIPages) -> None:
    from memdir_study.ui import views_runs

    pages.page("/runs", views_runs.runs)
    pages.page("/run", views_runs.run)
    pages.page("/run/answers", views_runs.answers)
    pages.page("/run/asset", views_runs.asset)
    pages.page("/turn", views_runs.turn)
    pages.templates(__name__.rpartition(".")[0] + ".ui")  # memdir_study.ui's templates/
