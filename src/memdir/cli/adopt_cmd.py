"""`memdir adopt DIR`: a folder of markdown notes made a valid memory in place (agents/adopt.py)."""

from __future__ import annotations

from pathlib import Path

import click

from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError


@click.command(
    "adopt",
    cls=StoreCommand,
    root_exists=False,
    root_help="The folder of notes to make a memory, as ROOT or with --root.",
)
@click.option("--dry-run", is_flag=True, help="List what would change and write nothing.")
@click.option(
    "--rename",
    is_flag=True,
    help="Also rename notes whose file name is not kebab-case (Travel Plans.md -> travel-plans.md); "
    "'see /memories/...' references to them are rewritten, other links to them will break.",
)
@click.option(
    "--redact-secrets",
    is_flag=True,
    help="Write the secrets the notes hold as [redacted: KIND] first, in place (no copy is kept); "
    "without it, notes holding secrets stop the adoption.",
)
def adopt_cmd(root: str, dry_run: bool, rename: bool, redact_secrets: bool) -> None:
    """Make ROOT, an existing folder of markdown notes, a valid memory in place.

    Each note without frontmatter gets `name` (its file stem) and `description` (its first
    heading, else its first line); a block lacking either key gets it at its top; every folder
    of notes gets a folder index (MEMORY.md). Every line of every note is kept. Hidden entries,
    files that are not markdown and notes with broken frontmatter are left alone and listed. One
    journaled step: 'memdir revert ROOT STEP' undoes it. A note saved while adopt runs is
    planned again from what was saved, and listed. Exit 1 when there was nothing to do.
    """
    from memdir.agents.adopt import adopt, plan
    from memdir.tools.wiring import open_store

    folder = root
    if not Path(folder).is_dir():
        raise click.BadParameter(f"no folder at {folder}", param_hint="ROOT")
    _secrets_first(folder, dry_run, redact_secrets)
    try:
        if dry_run:  # a bare store: no journal, no index, nothing written under .memdir either
            from memdir.store.store import Store

            adoption = plan(Store(folder), rename=rename)
        else:
            store = open_store(folder)
            adoption = adopt(store, plan(store, rename=rename))
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    for line in adoption.lines():
        click.echo(f"{'would ' if dry_run and not line.startswith(('kept', 'left')) else ''}{line}")
    did = "would change" if dry_run else "changed"
    click.echo(
        f"{did} {adoption.changes} file(s): {len(adoption.described)} note(s) given frontmatter, "
        f"{len(adoption.renamed)} renamed, {len(adoption.indexed)} MEMORY.md made; "
        f"{len(adoption.left)} entry(ies) left alone"
        + (f"; {len(adoption.misnamed)} name(s) validate refuses kept" if adoption.misnamed else "")
        + (
            f"; {len(adoption.retargeted)} more note(s) with references rewritten"
            if adoption.retargeted
            else ""
        )
        + (f"; {len(adoption.replanned)} planned again (saved while adopt ran)" if adoption.replanned else "")
    )
    if not adoption.changes:
        click.echo("nothing to adopt: the notes already have what a memory needs", err=True)
        raise SystemExit(1)
    if not dry_run:
        from memdir.store.journal import Journal

        step = next((s.index for s in reversed(Journal(store.root).steps()) if s.tool == "adopt"), None)
        click.echo(f"one journaled step ({step}); undo it with: memdir revert {folder} {step}")


def _secrets_first(folder: str, dry_run: bool, redact: bool) -> None:
    """Secrets in the notes are listed and stop the adoption, or with `redact` are redacted in
    place before the journal records the notes (agents/adopt_secrets.py)."""
    from memdir.agents.adopt_secrets import held, redact_in_place
    from memdir.store.store import Store

    bare = Store(folder)
    found = held(bare)
    if not found:
        return
    verb = "would redact" if dry_run else "redacted" if redact else "secret"
    for h in found:
        click.echo(f"{verb}: {h}")
    if dry_run:
        return
    if not redact:
        raise click.ClickException(
            f"{len(found)} secret(s) in the notes (listed above); nothing was changed. Memory never "
            "stores secrets: move those notes out, or run again with --redact-secrets to write each "
            "as [redacted: KIND] in place (no copy is kept), or keep one with "
            f"'memdir secrets allow {folder}'"
        )
    redact_in_place(bare, found)


def register(cli: click.Group) -> None:
    cli.add_command(adopt_cmd)
