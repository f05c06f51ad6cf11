"""`memdir check` reports the secrets a store already holds (written by hand, or before
redaction): path:line and kind, never the secret (docs/secrets.md)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.store import secrets_allow

KEY = "AKIAZ7Q2M4N6P8R0T2V4"
CARD = "4242 4242 4242 4242"


def test_check_names_where_and_what_kind_but_never_the_secret(tmp_path: Path) -> None:
    root = tmp_path / "m"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    note = f"---\nname: bills\ndescription: bills\n---\n# Bills\n- card {CARD}\n- aws id {KEY}\n"
    (root / "bills.md").write_text(note)  # by hand: no memdir write redacted it
    res = CliRunner().invoke(cli, ["check", str(root)])
    assert res.exit_code == 1
    assert "FAIL [secret] /memories/bills.md:6: holds a secret (card-number)" in res.output
    assert "FAIL [secret] /memories/bills.md:7: holds a secret (aws-key)" in res.output
    assert KEY not in res.output and "4242" not in res.output
    secrets_allow.allow(root, CARD, "the test card of the payment docs")
    found = json.loads(CliRunner().invoke(cli, ["check", str(root), "--json"]).output)
    assert [p["path"] for p in found["problems"] if p["rule"] == "secret"] == ["/memories/bills.md:7"]
