"""Commands over one store: init, validate, context, tool."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from memdir.cli.guard_opts import guard_options, require_reorganization
from memdir.cli.renamed import Renamed
from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.files import MAX_FILE_BYTES
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

# The largest file a tool writes, every character of it escaped as \uXXXX, and room for the
# other arguments: what `memdir tool` reads from stdin or @FILE before refusing.
MAX_ARGS_BYTES = 6 * MAX_FILE_BYTES + 2**20


def _store(root: str, create: bool = False, guards: Guards | None = None) -> Store:
    try:
        return open_store(root, create=create, guards=guards)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("init", cls=StoreCommand, root_exists=False)
def init_cmd(root: str) -> None:
    """Make ROOT a valid empty memory (a root MEMORY.md). An Anthropic SDK memory helper's
    folder is converted in place first, as memdir.Memory(ROOT) would (docs/serving.md)."""
    from memdir.store.sdk_layout import unconverted

    store = _store(root, create=True)
    if unconverted(store.root):
        from memdir.agents.sdk_folder import convert

        try:
            for line in convert(store, role="cli").lines():
                click.echo(line)
        except MemdirError as exc:
            raise click.ClickException(str(exc)) from None
    made = spec.init(store)
    click.echo(f"{'Initialized' if made else 'Already a memory:'} {store.root}")


@click.command("validate", cls=StoreCommand)
@click.option("--json", "as_json", is_flag=True, help="Print violations as JSON.")
def validate_cmd(root: str, as_json: bool) -> None:
    """List every violation of the Agent Memory convention; exit 1 when invalid."""
    report = spec.validate(_store(root))
    if as_json:
        click.echo(
            json.dumps(
                {"valid": report.valid, "violations": [v.as_dict() for v in report.violations]}, indent=2
            )
        )
    elif report.valid:
        click.echo("valid: no violations")
    else:
        for v in report.violations:
            click.echo(f"{v.path}: [{v.rule}] {v.message}")
        click.echo(f"invalid: {len(report.violations)} violation(s)")
    sys.exit(0 if report.valid else 1)


@click.command("context", cls=StoreCommand)
@click.option(
    "--core-budget",
    cls=Renamed,
    old=("--budget",),
    type=int,
    default=spec.DEFAULT_CORE_BUDGET,
    show_default=True,
    help="Core memory budget in tokens.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) when core memory exceeds the budget.")
def context_cmd(root: str, core_budget: int, strict: bool) -> None:
    """Print what a conforming harness puts in the prompt: core memory, then child directories."""
    ctx = spec.context(_store(root), core_budget)
    click.echo(ctx.text, nl=False)
    if ctx.over_budget:
        click.echo(
            f"warning: core memory is {ctx.tokens} tokens, over the budget of {core_budget}; "
            "move detail into subdirectories",
            err=True,
        )
        if strict:
            sys.exit(1)


@click.command("tool", cls=StoreCommand)
@click.argument("name")
@click.argument("args_json", default="{}")
@click.option("--profile", default=None, help="Restrict to a profile (default: any tool).")
@click.option("--role", default=None, help="Role recorded in the journal.")
@guard_options
@click.option(
    "--reorganize",
    is_flag=True,
    help="Mark this call's write as a reorganization session (--preserve-facts).",
)
def tool_cmd(
    root: str, name: str, args_json: str, profile: str | None, role: str | None, guards: Guards | None,
    reorganize: bool,
) -> None:  # fmt: skip
    """Run one tool NAME with JSON arguments and print its result (exit 1 on a tool error).

    ARGS_JSON is a JSON object, `-` to read it from stdin, or `@FILE` to read it from FILE: a
    command line holds at most 128 KiB per argument, and a file_text may be far larger.
    """
    require_reorganization(guards, reorganize, "add --reorganize to mark this call as one")
    args = _arguments(args_json)
    harness = Harness(
        _store(root, guards=guards), profile or _profile_for(name), keep_indexes=True, role=role or "cli",
        reorganize=True if reorganize else None,
    )  # fmt: skip
    result = harness.call(name, args)
    click.echo(result.text)
    sys.exit(1 if result.is_error else 0)


def _arguments(given: str) -> dict[str, Any]:
    """The tool arguments `given` names: JSON on the command line, `-` (stdin) or `@FILE`.

    What is read is bounded (MAX_ARGS_BYTES) and must be UTF-8 JSON holding one object.
    """
    if given != "-" and not given.startswith("@"):
        return _parse(given, "")
    if given == "-":
        stream = sys.stdin.buffer
        if stream.isatty():
            raise click.BadParameter(
                "'-' reads the JSON arguments from stdin, which is a terminal; pipe them in "
                "(memdir tool ... - < args.json) or pass @args.json"
            )
        data, source = stream.read(MAX_ARGS_BYTES + 1), "stdin"
    else:
        source = given[1:]
        try:
            with open(source, "rb") as fh:
                data = fh.read(MAX_ARGS_BYTES + 1)
        except OSError as exc:
            raise click.BadParameter(f"{given}: cannot read the arguments file ({exc.strerror})") from None
        source = given
    if len(data) > MAX_ARGS_BYTES:
        raise click.BadParameter(
            f"{source}: the arguments may be at most {MAX_ARGS_BYTES // 2**20} MiB of JSON "
            f"(a file holds at most {MAX_FILE_BYTES // 2**20} MiB)"
        )
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")  # a BOM some editors put first
    except UnicodeDecodeError as exc:
        raise click.BadParameter(f"not UTF-8 in {source} ({exc.reason} at byte {exc.start})") from None
    return _parse(text, f" in {source}")


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(
            f'not JSON{source} ({exc}); pass e.g. \'{{"path": "/memories"}}\', - (stdin) or @FILE'
        ) from None
    except RecursionError:
        raise click.BadParameter(f"JSON nested too deep{source}; tool arguments are one object") from None
    if not isinstance(value, dict):
        raise click.BadParameter(
            f"the arguments{source} are a JSON object of parameter names and values, not a JSON "
            f'{type(value).__name__}; pass e.g. \'{{"path": "/memories"}}\''
        )
    return value


def _profile_for(name: str) -> str:
    from memdir.tools.profiles import PROFILES

    for prof, names in PROFILES.items():
        if name in names:
            return prof
    raise click.BadParameter(
        f"no tool named {name!r}; tools: {', '.join(sorted({n for v in PROFILES.values() for n in v}))}"
    )


def register(cli: click.Group) -> None:
    for cmd in (init_cmd, validate_cmd, context_cmd, tool_cmd):
        cli.add_command(cmd)
