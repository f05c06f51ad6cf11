"""Exports as users download them (issue 46, item 10): ChatGPT and Claude.ai hand over a .zip;
`memdir ingest export.zip` reads the conversations.json inside it, never extracting anything,
within stated caps on the member's unpacked size and on the number of members. Real zip files,
built here."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.chatlogs.test_exports import chatgpt_export, claude_export

from memdir import Memory
from memdir.chatlogs import read_chat
from memdir.chatlogs.archive import EXPORT_MEMBER, MAX_ZIP_MEMBERS
from memdir.cli.main import cli
from memdir.stream import MAX_JSON_LIST_BYTES


def _zip(path: Path, members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode("utf-8")


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_chatgpt_export_zip_reads_as_its_conversations_json(tmp_path: Path) -> None:
    """ChatGPT's zip: conversations.json beside chat.html, user.json and the chat's images."""
    plain = tmp_path / "conversations.json"
    plain.write_bytes(_json(chatgpt_export()))
    unzipped = read_chat(plain)
    export = _zip(
        tmp_path / "export.zip",
        {
            "chat.html": b"<html>...</html>",
            "user.json": b'{"id": "user-1"}',
            EXPORT_MEMBER: _json(chatgpt_export()),
            "dalle-generations/file-1.webp": b"RIFF\x00\x00\x00\x00WEBP" * 100,
        },
    )
    before = _listing(tmp_path)
    chat = read_chat(export)
    assert chat.format == "chatgpt-export" and chat.turns == unzipped.turns and len(chat.turns) == 5
    assert chat.skipped == unzipped.skipped
    assert _listing(tmp_path) == before  # nothing extracted


def test_a_claude_export_zip_in_a_folder_reads_too(tmp_path: Path) -> None:
    """Claude.ai's zip: conversations.json beside users.json and projects.json; a zip made again
    of the unpacked folder holds them one folder down, and reads the same."""
    members = {"users.json": b"[]", "projects.json": b"[]", EXPORT_MEMBER: _json(claude_export())}
    top = read_chat(_zip(tmp_path / "claude.zip", members))
    folder = {f"data-2024-08-01/{name}": data for name, data in members.items()}
    below = read_chat(_zip(tmp_path / "again.zip", folder, compression=zipfile.ZIP_STORED))
    assert top.format == below.format == "claude-export"
    assert [t.text for t in top.turns] == [t.text for t in below.turns]
    assert [t.text for t in top.turns][-1] == "Happy birthday, Rex!" and len(top.turns) == 4


def test_memdir_ingest_and_memory_add_take_the_zip(tmp_path: Path) -> None:
    export = _zip(tmp_path / "export.zip", {EXPORT_MEMBER: _json(chatgpt_export())})
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", str(export)])
    assert res.exit_code == 0, res.output
    assert "read 5 turn(s) (chatgpt-export, 2 session(s))" in res.output
    assert "Lisbon" in "".join(p.read_text() for p in root.rglob("*.md") if ".memdir" not in p.parts)
    claude = _zip(tmp_path / "claude.zip", {EXPORT_MEMBER: _json(claude_export())})
    result = Memory(tmp_path / "other").add(claude)
    assert result.source == "claude-export" and result.turns == 4


def test_a_zip_bomb_past_the_cap_is_refused_naming_it(tmp_path: Path) -> None:
    """A conversations.json that unpacks past the cap (64 MiB of spaces, a few hundred KB
    packed) is refused before it is read, naming the cap and what to do; nothing is written."""
    bomb = b"[" + b" " * MAX_JSON_LIST_BYTES + b"]"
    export = _zip(tmp_path / "bomb.zip", {EXPORT_MEMBER: bomb})
    assert export.stat().st_size < 1_000_000
    del bomb
    with pytest.raises(ValueError, match="64 MiB") as err:
        read_chat(export)
    said = str(err.value)
    assert str(export) in said and EXPORT_MEMBER in said and "split" in said
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    before = _listing(root)
    res = CliRunner().invoke(cli, ["ingest", str(root), "--model", "offline", str(export)])
    assert res.exit_code != 0 and "64 MiB" in res.output and "Traceback" not in res.output
    assert _listing(root) == before


def test_a_zip_of_too_many_members_is_refused_before_its_listing_is_read(tmp_path: Path) -> None:
    export = tmp_path / "many.zip"
    with zipfile.ZipFile(export, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(EXPORT_MEMBER, _json(chatgpt_export()))
        for i in range(MAX_ZIP_MEMBERS):
            zf.writestr(f"f/{i}", b"")
    with pytest.raises(ValueError, match=f"{MAX_ZIP_MEMBERS:,}") as err:
        read_chat(export)
    assert f"{MAX_ZIP_MEMBERS + 1:,}" in str(err.value) and EXPORT_MEMBER in str(err.value)


def test_a_zip_without_conversations_json_says_what_it_holds_and_what_to_do(tmp_path: Path) -> None:
    export = _zip(tmp_path / "photos.zip", {"a.jpg": b"\xff\xd8", "notes/b.txt": b"hi"})
    with pytest.raises(ValueError, match=r"no conversations\.json") as err:
        read_chat(export)
    said = str(err.value)
    assert "a.jpg" in said and "notes/b.txt" in said and "ChatGPT" in said and "Claude.ai" in said
    res = CliRunner().invoke(cli, ["ingest", str(tmp_path / "mem"), "--model", "offline", str(export)])
    assert res.exit_code != 0 and "no conversations.json" in res.output
    assert "UTF-8" not in res.output


def test_a_member_name_that_climbs_or_is_doubled_is_never_taken(tmp_path: Path) -> None:
    """Nothing is extracted, so no name can write anywhere; still, a name that climbs out or is
    absolute is no export's, and two conversations.json are a choice for the user to make."""
    climbs = _zip(tmp_path / "climbs.zip", {"../conversations.json": _json(chatgpt_export())})
    with pytest.raises(ValueError, match=r"no conversations\.json"):
        read_chat(climbs)
    absolute = _zip(tmp_path / "absolute.zip", {"/conversations.json": _json(chatgpt_export())})
    with pytest.raises(ValueError, match=r"no conversations\.json"):
        read_chat(absolute)
    two = _zip(
        tmp_path / "two.zip",
        {EXPORT_MEMBER: _json(chatgpt_export()), f"old/{EXPORT_MEMBER}": _json(claude_export())},
    )
    with pytest.raises(ValueError, match=r"2 conversations\.json") as err:
        read_chat(two)
    assert f"old/{EXPORT_MEMBER}" in str(err.value)
    assert _listing(tmp_path) == ["absolute.zip", "climbs.zip", "two.zip"]


def test_a_damaged_or_encrypted_zip_is_a_clear_error(tmp_path: Path) -> None:
    good = _zip(tmp_path / "good.zip", {EXPORT_MEMBER: _json(chatgpt_export())}).read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match="not a readable zip"):
        read_chat(cut)
    flipped = bytearray(good)
    at = flipped.index(b"PK\x01\x02")  # the central directory: mark the member encrypted
    flipped[at + 8] |= 0x01
    locked = tmp_path / "locked.zip"
    locked.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="encrypted"):
        read_chat(locked)
