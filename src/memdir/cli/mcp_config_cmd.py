"""`memdir mcp-config`: the snippet an MCP client needs to start `memdir serve` over one memory.

Each client names its servers differently: Claude Code takes a `claude mcp add` line (or the
`.mcp.json` project file), Claude Desktop and Cursor an `mcpServers` object, VS Code a `servers`
object whose entries say `"type": "stdio"`. The snippet goes to stdout alone, so it can be piped
or pasted; where it belongs goes to stderr.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from memdir.cli.root_opts import StoreCommand, memory_root
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.tools.profiles import PROFILES, profile_specs

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")
# Where each client reads the JSON form (printed to stderr as a hint).
WHERE = {
    "claude-code": "merge into .mcp.json at the project root (its paths are this machine's alone)",
    "claude-desktop": "merge into claude_desktop_config.json (Settings > Developer > Edit Config), restart",
    "cursor": "merge into .cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project",
    "vscode": "merge into .vscode/mcp.json in the workspace, or the user's ('MCP: Open User Configuration')",
}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*\Z")


def launcher() -> list[str]:
    """The absolute command that runs this very memdir: `<interpreter> -m memdir`.

    A client launched from a desktop or an editor starts the server without this shell's PATH
    or activated venv, so a bare `memdir` may be missing or name another install. The
    interpreter running now is the one that has this memdir, whichever way it was started (the
    console script, `python -m memdir`); the console script would only wrap it. Its path is made
    absolute but not resolved: a venv's `python` is a link, and resolving it would leave the venv.
    """
    if not sys.executable:
        raise click.ClickException("cannot tell which Python runs memdir; give a client the command by hand")
    return [os.path.abspath(sys.executable), "-m", "memdir"]


def client_env() -> dict[str, str]:
    """Environment the client must pass for the launcher to import memdir: PYTHONPATH, when this
    memdir is importable only through it (or through the current folder), since a client starts
    the server with neither. Empty for an installed memdir."""
    import memdir

    home = str(Path(memdir.__file__).resolve().parent.parent)
    named = {str(Path(p).resolve()) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    if home in named or home == str(Path.cwd().resolve()):
        return {"PYTHONPATH": home}
    return {}


def servable(profile: str) -> str:
    """`profile`, refused now if this install cannot serve it (a missing extra, no sandbox), so
    the failure is here and not in a client's log."""
    try:
        profile_specs(profile)
    except MemdirError as exc:
        raise click.BadParameter(str(exc), param_hint="--profile") from None
    return profile


def claude_code_line(name: str, argv: list[str], env: dict[str, str], scope: str | None) -> str:
    """`claude mcp add` quoted for a POSIX shell; its options come before the server name, and
    `--` ends them so the server's own flags are not read as Claude's."""
    opts = ["--transport", "stdio", *(["--scope", scope] if scope else [])]
    for key, value in env.items():
        opts += ["--env", f"{key}={value}"]
    return shlex.join(["claude", "mcp", "add", *opts, name, "--", *argv])


def json_config(client: str, name: str, argv: list[str], env: dict[str, str]) -> JsonObject:
    """The whole config file for `client` holding one server: `servers` with a `type` for VS Code,
    `mcpServers` for the others (Claude Code's `.mcp.json` also carries the `type`)."""
    entry: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
    if client in ("vscode", "claude-code"):
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = env
    return {"servers" if client == "vscode" else "mcpServers": {name: entry}}


@click.command(
    "mcp-config",
    cls=StoreCommand,
    root_memory=True,
    root_default=".",
    root_help="The memory to serve (made absolute; must hold MEMORY.md), as ROOT or with --root "
    "[default: the current folder].",
)
@click.option("--client", required=True, type=click.Choice(CLIENTS), help="The MCP client to plug into.")
@click.option(
    "--profile",
    default="manage",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="Tool profile the server exposes.",
)
@click.option("--name", default="memdir", show_default=True, help="The server's name in the client.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["cli", "json"]),
    default=None,
    help="cli: the `claude mcp add` line (claude-code's default); json: the config file (the others').",
)
@click.option(
    "--scope",
    type=click.Choice(["local", "project", "user"]),
    default=None,
    help="claude-code's --scope (its default: local, this project, only you).",
)
def mcp_config_cmd(
    client: str, root: str, profile: str, name: str, fmt: str | None, scope: str | None
) -> None:
    """Print what CLIENT needs to start `memdir serve ROOT --profile PROFILE` over stdio: a
    `claude mcp add` line for claude-code, the JSON config for claude-desktop, cursor and vscode.
    The command is absolute, so the client needs neither this shell's PATH nor its venv."""
    fmt = fmt or ("cli" if client == "claude-code" else "json")
    if fmt == "cli" and client != "claude-code":
        raise click.UsageError(f"{client} has no command to add a server; drop --format cli for its JSON")
    if scope is not None and fmt != "cli":
        raise click.UsageError(
            "--scope belongs to the `claude mcp add` line: --client claude-code, without --format json"
        )
    if not NAME.match(name):
        raise click.BadParameter(
            "use letters, digits, '-' and '_' (a client builds tool names from it)", param_hint="--name"
        )
    argv = [*launcher(), "serve", str(memory_root(root)), "--profile", servable(profile)]
    env = client_env()
    if fmt == "cli":
        click.echo(claude_code_line(name, argv, env, scope))
        return
    click.echo(json.dumps(json_config(client, name, argv, env), indent=2))
    click.echo(f"memdir: {WHERE[client]}", err=True)


def register(cli: click.Group) -> None:
    cli.add_command(mcp_config_cmd)
