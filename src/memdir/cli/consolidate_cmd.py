"""`memdir consolidate` (a gated reorganization pass over a live store) and `memdir revert`
(a store put back as it was before one journaled step). docs/consolidate.md has the details.

Exit status of consolidate: 0 landed (or a dry run whose gates all held, or a pass that changed
nothing), 1 a gate failed and nothing changed, 2 the pass could not run. Of revert: 0 reverted
(or nothing to do), 2 refused.
"""

from __future__ import annotations

import asyncio
import json
import sys

import click

from memdir.agents.consolidate import ConsolidationReport, consolidate
from memdir.agents.cost_cap import CostCap
from memdir.agents.revert import revert, revert_operation
from memdir.agents.roles import REORG_PASSES
from memdir.cli.model_opts import call_record, model_from_options, model_options, usage_line
from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError
from memdir.models import ModelError
from memdir.models.usage import price_cards
from memdir.tools.wiring import open_store


class Refused(click.ClickException):
    """The command could not do its work at all (exit 2), as opposed to a gate that failed (1)."""

    exit_code = 2


@click.command("consolidate", cls=StoreCommand)
@model_options
@click.option("--max-tokens", type=click.IntRange(min=0), help="Cost cap: prompt plus output tokens.")
@click.option("--max-usd", type=click.FloatRange(min=0), help="Cost cap: dollars, priced by the card.")
@click.option("--max-seconds", type=click.FloatRange(min=0), help="Cost cap: wall seconds of the pass.")
@click.option(
    "--price-card",
    type=click.Choice(sorted(price_cards())),
    default=None,
    help="Price card for --max-usd and the report (default: the model's own card).",
)
@click.option("--passes", type=click.IntRange(min=1), default=REORG_PASSES, show_default=True, help="Passes.")
@click.option("--dry-run", is_flag=True, help="Run the pass and the gates, print the diff, land nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def consolidate_cmd(
    root: str, model_name: str, base_url: str | None, tool_protocol: str | None, api_key_env: str | None,
    script: str | None, max_tokens: int | None, max_usd: float | None, max_seconds: float | None,
    price_card: str | None, passes: int, dry_run: bool, as_json: bool,
) -> None:  # fmt: skip
    """Reorganize ROOT (preserve mode) on a private working copy and land it as one journaled step
    only if the cost cap held, no sourced fact was lost and `check` found nothing new.

    The live store stays open to other writers during the pass; if one wrote meanwhile, the pass
    does not land. Undo a landed pass with 'memdir revert ROOT STEP' (or --operation ID).
    """
    store = open_store(root)
    try:
        model = model_from_options(model_name, base_url, api_key_env, script, tool_protocol)
    except click.ClickException as exc:
        raise Refused(exc.message) from None
    card = price_cards()[price_card] if price_card else None
    caps = CostCap(max_tokens, max_usd, max_seconds, card)
    record = call_record(store, command="consolidate")
    try:
        report = asyncio.run(
            consolidate(model, store, caps=caps, passes=passes, dry_run=dry_run, record=record)
        )
    except (ModelError, MemdirError) as exc:
        raise Refused(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
    else:
        _print(report)
        click.echo(usage_line(model), err=True)
    if report.landed and report.step is not None and not as_json:
        click.echo(f"undo with: memdir revert {root} {report.step}")
    sys.exit(1 if report.failed else 0)


def _print(report: ConsolidationReport) -> None:
    for g in report.gates:
        click.echo(f"{'ok  ' if g.passed else 'FAIL'} {g.name}: {g.message}")
    click.echo(f"summary: {report.summary.headline()}")
    for line in report.summary.lines():
        click.echo(f"  {line}")
    if report.dry_run and report.diff:
        click.echo(report.diff, nl=False)
    click.echo(report.verdict())


@click.command("revert", cls=StoreCommand)
@click.argument("step", type=int, required=False)
@click.option(
    "--operation",
    "op_ref",
    default=None,
    help="Undo one whole operation (an ingest, an add, a consolidate, an adopt, one tool call): its id "
    "or 4+ characters of it, as 'memdir history ROOT' lists them. Other operations' files stay.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Restore the store as it was before STEP even when later steps or edits outside the tools "
    "would be undone too (with --operation: restore its files even when later operations changed them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def revert_cmd(root: str, step: int | None, op_ref: str | None, force: bool, as_json: bool) -> None:
    """Put ROOT back as it was just before journal STEP ('memdir history ROOT --steps' lists the
    steps), byte for byte, as a new journaled step. Refused when STEP is not the newest unless
    --force. With --operation ID instead of STEP: put back only the files that operation changed,
    to their bytes before it, as one new step; refused when a later operation changed one of them."""
    if (step is None) == (op_ref is None):
        raise click.UsageError(
            "name one thing to revert: a STEP, or --operation ID ('memdir history ROOT' lists both)"
        )
    store = open_store(root)
    try:
        if op_ref is not None:
            report = revert_operation(store, op_ref, force=force)
        else:
            assert step is not None
            report = revert(store, step, force=force)
    except MemdirError as exc:
        raise Refused(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
        return
    for line in report.lines():
        click.echo(f"  {line}")
    click.echo(report.verdict())


def register(cli: click.Group) -> None:
    cli.add_command(consolidate_cmd)
    cli.add_command(revert_cmd)
