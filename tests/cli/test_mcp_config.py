"""`memdir mcp-config`: each client's snippet parses, and the command it names starts the server
through the SDK's real stdio client, from another folder and with no venv on PATH (as a client
launched from a desktop would)."""

from __future__ import annotations

import itertools
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client, StdioServerParameters
from tests.conftest import REPO

from memdir.cli.main import cli
from memdir.tools.profiles import PROFILES

CASES = [  # client, extra options, the profile served
    ("claude-code", [], "manage"),
    ("claude-code", ["--format", "json", "--profile", "search"], "search"),
    ("claude-desktop", ["--profile", "search"], "search"),
    ("cursor", [], "manage"),
    ("vscode", ["--profile", "folder"], "folder"),
]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["mcp-config", *args])


def config(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def launch(client: str, out: str, name: str = "memdir") -> tuple[list[str], dict[str, str]]:
    """The command (argv) and environment a client would take from the snippet `out`."""
    if out.startswith("claude "):
        argv = shlex.split(out)
        assert argv[:3] == ["claude", "mcp", "add"] and out.count("\n") == 1
        cut = argv.index("--")
        opts, server = argv[3 : cut - 1], argv[cut - 1]
        assert server == name and opts[:2] == ["--transport", "stdio"]
        env = dict(v.split("=", 1) for k, v in itertools.pairwise(opts) if k == "--env")
        return argv[cut + 1 :], env
    doc: dict[str, Any] = json.loads(out)
    (key,) = doc
    assert key == ("servers" if client == "vscode" else "mcpServers")
    entry = doc[key][name]
    if client in ("vscode", "claude-code"):
        assert entry["type"] == "stdio"
    return [entry["command"], *entry["args"]], entry.get("env", {})


@pytest.mark.slow
@pytest.mark.parametrize(("client", "opts", "profile"), CASES)
async def test_snippet_starts_the_server(
    client: str, opts: list[str], profile: str, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.parent)  # a relative ROOT, resolved here, served from elsewhere
    argv, env = launch(client, config(root.name, "--client", client, *opts))
    assert Path(argv[0]).is_absolute() and argv[argv.index("serve") + 1] == str(root)
    assert "--root" not in argv  # the server is started as `memdir serve ROOT`, the one spelling
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env={"PATH": "/usr/bin:/bin", **env}, cwd="/"
    )
    async with Client(params) as client_session:
        tools = await client_session.list_tools()
        assert [t.name for t in tools.tools] == list(PROFILES[profile])
        r = await client_session.call_tool("view", {"path": "/memories"})
        assert not r.is_error and "/memories/MEMORY.md" in "".join(c.text for c in r.content)


def test_claude_code_line_quotes_and_scopes(tmp_path: Path) -> None:
    root = tmp_path / "my memory"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    out = config(str(root), "--client", "claude-code", "--scope", "user", "--name", "mem")
    argv = shlex.split(out)
    assert argv[:8] == ["claude", "mcp", "add", "--transport", "stdio", "--scope", "user", "mem"]
    assert argv[argv.index("serve") + 1] == str(root)  # one word despite the space
    assert config("--client", "claude-code", "--root", str(root), "--scope", "user", "--name", "mem") == out


def test_pythonpath_carried_only_when_memdir_needs_it(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    for client, *_ in CASES:
        assert launch(client, config("--client", client))[1] == {}
    src = str(REPO / "src")
    monkeypatch.setenv("PYTHONPATH", src)
    for client, *_ in CASES:
        assert launch(client, config("--client", client))[1] == {"PYTHONPATH": src}


def test_json_hint_goes_to_stderr(root: Path) -> None:
    result = run("--client", "cursor", "--root", str(root))
    assert ".cursor/mcp.json" in result.stderr and ".cursor" not in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--client", "zed"], "'claude-code', 'claude-desktop', 'cursor', 'vscode'"),
        (["--client", "cursor", "--profile", "nope"], "'manage', 'search'"),
        (["{tmp}/absent", "--client", "cursor"], "memdir init {tmp}/absent"),
        (["--client", "cursor", "--root", "{tmp}/absent"], "memdir init {tmp}/absent"),
        (["{tmp}", "--client", "cursor"], "not a memory (no MEMORY.md)"),
        (["--client", "cursor", "--format", "cli"], "cursor has no command"),
        (["--client", "vscode", "--scope", "user"], "--scope belongs to the `claude mcp add` line"),
        (["--client", "cursor", "--name", "my memory"], "letters, digits"),
    ],
)
def test_refusals(args: list[str], says: str, root: Path) -> None:
    tmp = str(root.parent)
    result = run(
        *(a.replace("{tmp}", tmp) for a in args),
        *([] if any("{tmp}" in a for a in args) else [str(root)]),
    )
    assert result.exit_code == 2 and says.replace("{tmp}", tmp) in result.output, result.output
    assert result.stdout == ""


def test_readme_documents_every_client() -> None:
    readme = (REPO / "README.md").read_text()
    for client in ("claude-code", "claude-desktop", "cursor", "vscode"):
        assert f"mcp-config --client {client}" in readme
