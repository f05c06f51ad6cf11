"""`memdir token list|revoke` over a real tenants file: list never shows a token, revoke removes
exactly one entry in one rewrite, and a name that matches no token changes nothing and fails."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.mcp import tenants


def _add(runner: CliRunner, file: Path, root: Path, *extra: str) -> str:
    runner.invoke(cli, ["init", str(root)], catch_exceptions=False)
    out = runner.invoke(cli, ["token", "add", "--tenants", str(file), "--root", str(root), *extra])
    assert out.exit_code == 0, out.output
    return out.stdout.strip().splitlines()[-1]


def test_list_shows_fingerprints_and_dates_never_a_token(tmp_path: Path) -> None:
    runner, file = CliRunner(), tmp_path / "tenants.json"
    first = _add(runner, file, tmp_path / "acme")
    second = _add(runner, file, tmp_path / "globex", "--profile", "search", "--label", "dashboard")
    out = runner.invoke(cli, ["token", "list", "--tenants", str(file)])
    assert out.exit_code == 0, out.output
    assert first not in out.output and second not in out.output and "mdt_" not in out.output
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["fingerprint", "tenant", "profile", "created", "label", "root"]
    for line, token, tenant in ((lines[1], first, "acme"), (lines[2], second, "globex")):
        fingerprint = "sha256:" + tenants.hash_token(token)[:12]
        assert line.split()[:3] == [fingerprint, tenant, "manage" if tenant == "acme" else "search"]
        assert re.search(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\b", line)
    assert "dashboard" in lines[2]
    assert all("created" in e and e["created"] for e in json.loads(file.read_text()))


def test_revoke_removes_one_token_and_says_so(tmp_path: Path) -> None:
    runner, file = CliRunner(), tmp_path / "tenants.json"
    first = _add(runner, file, tmp_path / "acme")
    second = _add(runner, file, tmp_path / "globex")
    fingerprint = "sha256:" + tenants.hash_token(first)[:12]
    out = runner.invoke(cli, ["token", "revoke", "--tenants", str(file), fingerprint])
    assert out.exit_code == 0, out.output
    assert f"revoked {fingerprint} (tenant 'acme', manage); 1 token(s) left" in out.stdout
    registry = tenants.load(file)
    assert registry.lookup(first) is None and registry.lookup(second) is not None
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".memdir-tmp-")]  # one atomic rewrite
    # the token itself names it too
    out = runner.invoke(cli, ["token", "revoke", "--tenants", str(file), second])
    assert out.exit_code == 0 and "0 token(s) left" in out.stdout
    assert tenants.load(file).tokens == []


def test_revoking_an_unknown_token_changes_nothing_and_fails(tmp_path: Path) -> None:
    runner, file = CliRunner(), tmp_path / "tenants.json"
    token = _add(runner, file, tmp_path / "acme")
    before = file.read_bytes()
    for which, said in (
        ("sha256:000000000000", "no token has fingerprint sha256:000000000000"),
        ("mdt_not-a-token-of-this-file", "is neither a token of this file nor a fingerprint"),
        ("abc", "is neither a token of this file nor a fingerprint"),
    ):
        out = runner.invoke(cli, ["token", "revoke", "--tenants", str(file), which])
        assert out.exit_code == 1 and said in out.output, out.output
        assert "Traceback" not in out.output
    assert file.read_bytes() == before and tenants.load(file).lookup(token) is not None
    out = runner.invoke(cli, ["token", "revoke", "--tenants", str(tmp_path / "absent.json"), "sha256:abcdef"])
    assert out.exit_code == 1 and "no such tenants file" in out.output
    assert not (tmp_path / "absent.json").exists()
    out = runner.invoke(cli, ["token", "list", "--tenants", str(tmp_path / "absent.json")])
    assert out.exit_code == 1 and "no such tenants file" in out.output


def test_a_prefix_naming_two_tokens_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "tenants.json"
    (tmp_path / "a").mkdir()
    entries = [
        tenants.TenantToken("ab" * 32, "a", str(tmp_path / "a"), "manage"),
        tenants.TenantToken("ab" * 31 + "cd", "a", str(tmp_path / "a"), "search"),
    ]
    tenants.save(file, tenants.Tenants(entries))
    before = file.read_bytes()
    out = CliRunner().invoke(cli, ["token", "revoke", "--tenants", str(file), "ababab"])
    assert out.exit_code == 1 and "names 2 tokens" in out.output and "give more digits" in out.output
    assert file.read_bytes() == before
    out = CliRunner().invoke(cli, ["token", "list", "--tenants", str(file)])
    assert out.exit_code == 0 and out.stdout.splitlines()[1].split()[3] == "-"  # made before dates were kept
