"""Secrets never land (issue 49, item 2; docs/secrets.md): each write path is sent a secret, then
every file under the root and every journal object is searched byte for byte for it. Real
store, index and journal; the scripted model only at the LLM boundary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent_helpers import new_store
from memdir import Memory
from memdir.agents import ingest
from memdir.agents.consolidate import consolidate
from memdir.cli.main import cli
from memdir.integrations.anthropic_memory import MemdirMemoryTool
from memdir.models import get_model
from memdir.models.scripted import answer, call
from memdir.store.traces import traces
from memdir.stream import Turn
from memdir.tools.profiles import Harness
from memdir.tools.sandbox import _probe

OPENAI = "sk-proj-Q7wErTy8UiOp9AsDfGh0JkLzXcVbNm1234QwErTyUi"
GITHUB = "ghp_R2d2C3poBb8LukeLeiaHanSolo4ChewieYodaX"
WIFI = "Tr0ub4dor&3"
CHAT = (
    f"my openai key is {OPENAI} and the github token {GITHUB}; "
    f"oh and the wifi password is {WIFI} if you come over"
)
SECRETS = [OPENAI, GITHUB, WIFI]


def _landed(root: Path) -> dict[bytes, list[str]]:
    return traces(root, [s.encode() for s in SECRETS])


def _note(body: str) -> str:
    return f"---\nname: home\ndescription: home setup\n---\n# Home\n{body}\n"


def test_the_file_tools_redact_and_tell_the_model(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "m")
    made = memory.call("create", {"path": "/memories/home.md", "file_text": _note(f"- wifi: {CHAT}")})
    assert not made.is_error and "Redacted 3 secrets (github-token, openai-key, password)" in made.text
    edited = memory.call(
        "str_replace", {"path": "/memories/home.md", "old_str": "# Home", "new_str": f"# Home\nkey {OPENAI}"}
    )
    assert (
        not edited.is_error and "Redacted 1 secret (openai-key)" in edited.text and OPENAI not in edited.text
    )
    put = memory.call(
        "insert", {"path": "/memories/home.md", "insert_line": 5, "insert_text": f"token {GITHUB}"}
    )
    assert not put.is_error and "Redacted 1 secret (github-token)" in put.text
    text = memory.store.read_text("/memories/home.md")
    assert text.count("[redacted: openai-key]") == 2 and "[redacted: password]" in text
    assert not any(OPENAI in line for h in memory.search(OPENAI, mode="bm25") for _, line in h.snippet)
    memory.close()
    assert _landed(tmp_path / "m") == {}


def test_an_offline_ingest_counts_what_it_redacted_and_lands_none_of_it(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": CHAT}, {"role": "assistant", "content": "ok"}]))
    root = tmp_path / "m"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    res = CliRunner().invoke(cli, ["ingest", str(root), str(chat), "-m", "offline", "--strategy", "dump"])
    assert res.exit_code == 0, res.output
    assert "3 secrets (github-token, openai-key, password) redacted" in res.output, res.output
    again = CliRunner().invoke(cli, ["ingest", str(root), str(chat), "-m", "offline", "--strategy", "dump"])
    assert "nothing was added" in again.output  # the ledger knows the redacted turns
    res = CliRunner().invoke(
        cli, ["ingest", str(root), str(chat), "-m", "offline"]
    )  # curated by the offline model
    assert _landed(root) == {}


def test_memory_add_with_split_curation_lands_no_secret(tmp_path: Path) -> None:
    # a model that repeats the secret anyway (it never saw it: the turns are redacted first)
    reply = {"S1T1": [{"subject": "user", "kind": "fact", "attribute": "wifi password", "value": WIFI}]}
    memory = Memory(tmp_path / "m")
    added = memory.add(CHAT, model=get_model("scripted", script=[json.dumps(reply)]), curation="split")
    assert "3 secrets" in added.summary
    memory.close()
    assert _landed(tmp_path / "m") == {}


def test_agentic_curation_of_raw_turns_is_redacted_at_the_store(tmp_path: Path) -> None:
    # `ingest` called with the raw turns (as the study does): the store's writer is the guard
    store = new_store(tmp_path / "m")
    turns = [Turn("S1T1", "Alice", CHAT, "2024-05-01")]
    fact = f"- Alice's openai key is {OPENAI}, github {GITHUB} [S1T1]\n"
    script = [
        call("create", path="/memories/alice.md", file_text=_note(fact).replace("home", "alice")),
        answer("saved"),
    ]
    asyncio.run(ingest(get_model("scripted", script=script), store, turns, curation="agentic"))
    assert "[redacted: openai-key]" in store.read_text("/memories/alice.md")
    assert _landed(tmp_path / "m") == {}


def test_consolidation_lands_no_secret(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    with store.step("seed"):
        store.create("/memories/home.md", _note("- 2024-05-01: the router is in the hall [S1T1]"))
    script = [
        call(
            "str_replace",
            path="/memories/home.md",
            old_str="# Home",
            new_str=f"# Home\nwifi password: {WIFI}",
        ),
        answer("noted the wifi"),
    ]
    report = asyncio.run(consolidate(get_model("scripted", script=script), store, passes=1))
    assert report.landed, report.verdict()
    assert "[redacted: password]" in store.read_text("/memories/home.md")
    assert _landed(tmp_path / "m") == {}


def test_an_allowlisted_string_passes_unredacted(tmp_path: Path) -> None:
    root = tmp_path / "m"
    memory = Memory(root)
    res = CliRunner().invoke(cli, ["secrets", "allow", str(root)], input=WIFI + "\n")
    assert res.exit_code == 0, res.output
    assert WIFI.encode() not in (root / ".memdir" / "secrets-allow").read_bytes()
    made = memory.call("create", {"path": "/memories/home.md", "file_text": _note(f"- {CHAT}")})
    assert "Redacted 2 secrets (github-token, openai-key)" in made.text
    assert WIFI in memory.store.read_text("/memories/home.md")
    memory.close()


def test_adopt_refuses_notes_holding_secrets_unless_told_to_redact_them_first(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "home.md").write_text(f"# Home\n\nrouter login: {WIFI}\n")
    (notes / "keys.md").write_text(f"---\nname: keys\ndescription: keys\n---\nopenai {OPENAI}\n")
    before = {p.name: p.read_bytes() for p in notes.iterdir()}
    res = CliRunner().invoke(cli, ["adopt", str(notes)])
    assert res.exit_code == 1 and "secret: /memories/home.md:3 (password)" in res.output
    assert "secret: /memories/keys.md:5 (openai-key)" in res.output and OPENAI not in res.output
    assert {p.name: p.read_bytes() for p in notes.iterdir()} == before  # nothing changed, no .memdir
    res = CliRunner().invoke(cli, ["adopt", str(notes), "--redact-secrets"])
    assert res.exit_code == 0, res.output
    assert "redacted: /memories/keys.md:5 (openai-key)" in res.output
    assert "[redacted: openai-key]" in (notes / "keys.md").read_text()
    assert _landed(notes) == {}


@pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")
def test_the_shell_is_no_way_around_the_writer(tmp_path: Path) -> None:
    store = new_store(tmp_path / "m")
    harness = Harness(store, "shell")
    result = harness.call("bash", {"command": f"printf '%s\\n' '{CHAT}' >> MEMORY.md"})
    assert not result.is_error and "redacted 3 secrets (github-token, openai-key, password)" in result.text
    assert "[redacted: openai-key]" in store.read_text("/memories/MEMORY.md")
    assert _landed(tmp_path / "m") == {}


def test_the_anthropic_drop_in_says_what_it_redacted(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path / "m")
    said = tool.call({"command": "create", "path": "/memories/keys.txt", "file_text": CHAT})
    # 4: the description it synthesizes from the first line holds the key again
    assert "4 secrets (github-token, openai-key, password) redacted" in str(said)
    edit = {"command": "str_replace", "path": "/memories/keys.txt", "old_str": "if you", "new_str": OPENAI}
    assert "Redacted 1 secret (openai-key)" in str(tool.call(edit))
    assert _landed(tmp_path / "m") == {}
