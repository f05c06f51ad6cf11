"""`memdir demo`: a short end-to-end run of the tools on a sample store, offline."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click

from memdir.cli.root_opts import StoreCommand
from memdir.store import spec
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

ALICE = """---
name: alice
description: Alice Park, Calvin's sister; diet, work and travel plans
---
# Alice
## Diet
- Vegetarian [S1T4]
## Work
- Nurse at St. Mary's [S2T7]
"""


@click.command(
    "demo",
    cls=StoreCommand,
    root_exists=False,
    root_required=False,
    root_help="Where to build the sample store, as ROOT or with --root (default: a temp dir).",
)
def demo_cmd(root: str | None) -> None:
    """Build a sample store through the tools (at ROOT, else in a temp dir), search it read-only,
    and validate it."""
    where = Path(root) if root else Path(tempfile.mkdtemp(prefix="memdir-demo-"))
    store = open_store(where, create=True, init=True)
    manage = Harness(store, "manage", role="demo")
    search = Harness(store, "search", role="demo")
    steps: list[tuple[Harness, str, dict[str, Any]]] = [
        (manage, "create", {"path": "/memories/people/alice.md", "file_text": ALICE}),
        (
            manage,
            "create",
            {"path": "/memories/people/MEMORY.md", "file_text": "# People\n- alice.md: Alice Park\n"},
        ),
        (
            manage,
            "str_replace",
            {
                "path": "/memories/people/alice.md",
                "old_str": "- Vegetarian [S1T4]",
                "new_str": "- Vegan (since 2023-05-02) [S6T5]\n- ~~Vegetarian~~ (until 2023-05-02) [S1T4]",
            },
        ),
        (
            manage,
            "insert",
            {
                "path": "/memories/people/alice.md",
                "insert_line": 10,
                "insert_text": "## Travel\n- Plans Japan in October; see /memories/people/MEMORY.md [S6T9]",
            },
        ),
        (search, "grep", {"pattern": "vegan"}),
        (search, "toc", {"path": "/memories/people/alice.md"}),
        (search, "section_read", {"path": "/memories/people/alice.md", "section_path": "# Alice > ## Diet"}),
        (search, "create", {"path": "/memories/x.md", "file_text": "---\nname: x\ndescription: x\n---\n"}),
        (search, "view", {"path": "/memories/../etc/passwd"}),
        (search, "view", {"path": "/memories"}),
    ]
    for harness, name, args in steps:
        res = harness.call(name, args)
        click.secho(
            f"\n$ {harness.profile}.{name} {args if name != 'create' else {'path': args['path']}}", bold=True
        )
        click.secho(res.text, fg="red" if res.is_error else None)
    report = spec.validate(store)
    click.secho(f"\nvalidate: {'valid' if report.valid else report.violations}", bold=True)
    click.echo(f"meters: manage {manage.meter.as_dict()}\n        search {search.meter.as_dict()}")
    click.echo(f"store at {where}")


def register(cli: click.Group) -> None:
    cli.add_command(demo_cmd)
