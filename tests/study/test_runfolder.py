"""The run-folder kernel both studies write through (memdir_study/runfolder.py), on real files."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import flock_held
from memdir.errors import MemdirError
from memdir.store.oslock import LockTimeout
from memdir_study import runfolder
from memdir_study.runfolder import JsonlTable, require_same, write_manifest
from memdir_study.skills.folder import ChainFolder


def rows_of(n: int, cell: str = "a") -> list[dict[str, Any]]:
    return [{"cell": cell, "i": i, "text": f"row {i}"} for i in range(n)]


def test_a_cut_last_line_is_skipped_and_repaired(tmp_path: Path) -> None:
    table = JsonlTable(tmp_path / "answers.jsonl")
    table.append(rows_of(2))
    whole = table.path.read_bytes()
    with open(table.path, "ab") as fh:
        fh.write(b'{"cell": "a", "i": 2, "te')  # a kill mid-append
    assert table.rows() == rows_of(2)
    table.repair()
    assert table.path.read_bytes() == whole
    table.append(rows_of(3)[2:])  # the next row starts its own line
    assert table.rows() == rows_of(3)
    table.repair()  # nothing to cut
    assert table.rows() == rows_of(3)


def test_a_complete_line_that_is_not_json_is_refused(tmp_path: Path) -> None:
    table = JsonlTable(tmp_path / "tasks.jsonl")
    table.append(rows_of(1))
    with open(table.path, "ab") as fh:
        fh.write(b"not json\n")
    table.append(rows_of(1))
    with pytest.raises(MemdirError, match=r"tasks.jsonl:2 is not a JSON object"):
        table.rows()


def test_a_missing_table_has_no_rows(tmp_path: Path) -> None:
    table = JsonlTable(tmp_path / "aborted.jsonl")
    assert table.rows() == []
    table.repair()
    assert not table.path.exists()
    table.append([])  # created, empty, as the runners always did
    assert table.path.read_bytes() == b""


def test_rows_keep_each_study_s_bytes(tmp_path: Path) -> None:
    row = {"q": "café", "sep": "a\u2028b", "when": Path("x")}
    eval_table = JsonlTable(tmp_path / "answers.jsonl")
    eval_table.append([row])
    assert eval_table.path.read_bytes() == (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode()
    chain_table = JsonlTable(tmp_path / "tasks.jsonl", ensure_ascii=True)
    chain_table.append([{"q": "café"}])
    assert chain_table.path.read_bytes() == (json.dumps({"q": "café"}) + "\n").encode()
    # a line separator inside a string is no row boundary
    assert eval_table.rows() == [{"q": "café", "sep": "a\u2028b", "when": "x"}]


def test_appends_from_two_threads_interleave_as_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    shared = JsonlTable(path)
    payload = "x" * 20_000  # rows far larger than a pipe or buffer write

    def writer(name: str, table: JsonlTable) -> None:
        for batch in range(40):
            table.append([{"w": name, "batch": batch, "k": k, "p": payload} for k in range(3)])

    # one table object shared by two threads, and a second object on the same file (as a second
    # process would hold)
    threads = [
        threading.Thread(target=writer, args=("shared-1", shared)),
        threading.Thread(target=writer, args=("shared-2", shared)),
        threading.Thread(target=writer, args=("own", JsonlTable(path))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    got = shared.rows()
    assert len(got) == 3 * 40 * 3 and all(r["p"] == payload for r in got)
    for at in range(0, len(got), 3):  # each append's rows stay together and in order
        batch = got[at : at + 3]
        assert [r["k"] for r in batch] == [0, 1, 2]
        assert len({(r["w"], r["batch"]) for r in batch}) == 1
    for name in ("shared-1", "shared-2", "own"):
        assert [r["batch"] for r in got if r["w"] == name and r["k"] == 0] == list(range(40))


def test_an_append_waits_for_the_writer_holding_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runfolder, "LOCK_TIMEOUT", 0.05)
    table = JsonlTable(tmp_path / "answers.jsonl")
    table.append(rows_of(1))
    before = table.path.read_bytes()
    with flock_held(tmp_path / ".answers.lock"):  # another writer, by its own descriptor
        with pytest.raises(LockTimeout):
            table.append(rows_of(1))
        with pytest.raises(LockTimeout):
            table.withdraw({"cell": "a"})
        assert table.path.read_bytes() == before
    table.append(rows_of(2)[1:])
    assert table.rows() == rows_of(2)


def test_the_chain_s_tables_share_the_lock_it_always_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runfolder, "LOCK_TIMEOUT", 0.05)
    folder = ChainFolder(tmp_path)
    with flock_held(tmp_path / ".tasks.lock"):
        for table in (folder.tasks, folder.aborted):
            with pytest.raises(LockTimeout):
                table.append([{"variant": "v"}])
    assert not folder.tasks.path.exists() and not folder.aborted.path.exists()


def test_withdraw_removes_a_cell_and_keeps_the_other_rows_bytes(tmp_path: Path) -> None:
    table = JsonlTable(tmp_path / "answers.jsonl")
    table.append(rows_of(2, "a"))
    table.append([{"cell": "b", "note": "café"}])
    table.append(rows_of(1, "a"))
    kept = table.path.read_bytes().splitlines(keepends=True)[2]
    with open(table.path, "ab") as fh:
        fh.write(b'{"cell": "b", "cu')  # a cut line goes too
    assert table.withdraw({"cell": "a"}) == 3
    assert table.path.read_bytes() == kept
    assert table.withdraw({"cell": "a", "i": 0}) == 0  # a row must match every key


def test_withdraw_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = JsonlTable(tmp_path / "answers.jsonl")
    table.append(rows_of(2, "a") + rows_of(2, "b"))
    before = table.path.read_bytes()

    def failing_replace(src: str, dst: Path) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr("memdir.store.atomic.os.replace", failing_replace)
    with pytest.raises(OSError, match="disk gone"):
        table.withdraw({"cell": "a"})
    assert table.path.read_bytes() == before
    assert not list(tmp_path.glob(".memdir-tmp-*"))  # no temp file left


def test_write_manifest_keeps_each_study_s_bytes(tmp_path: Path) -> None:
    manifest = {"config": {"judge": "offline"}, "n": [1, 2]}
    write_manifest(tmp_path / "eval.json", manifest)
    write_manifest(tmp_path / "chain.json", manifest, indent=1, end="\n")
    assert (tmp_path / "eval.json").read_text() == json.dumps(manifest, indent=2)
    assert (tmp_path / "chain.json").read_text() == json.dumps(manifest, indent=1) + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.json", "eval.json"]


def test_a_resume_under_other_settings_names_each_differing_key(tmp_path: Path) -> None:
    stored = {"judge": "offline", "tool_set": "center", "limit": 3}
    require_same(tmp_path, None, stored)  # no run yet
    require_same(tmp_path, stored, dict(stored))
    with pytest.raises(MemdirError) as err:
        require_same(tmp_path, stored, {"judge": "gpt", "tool_set": "center", "sessions": "1-2"})
    assert str(err.value) == (
        f"{tmp_path} holds a run with other settings "
        "{'judge': ('offline', 'gpt'), 'limit': (3, None), 'sessions': (None, '1-2')}; "
        "resume with the same settings or choose another --out"
    )


def test_a_setting_is_compared_under_the_name_it_was_stored_with(tmp_path: Path) -> None:
    """No old name is read under a new one (a 0.1 project keeps no aliases): a folder whose
    manifest says `harness` holds other settings than a run with a `tool_set`."""
    with pytest.raises(MemdirError) as err:
        require_same(tmp_path, {"harness": "center"}, {"tool_set": "center"})
    assert "{'harness': ('center', None), 'tool_set': (None, 'center')}" in str(err.value)


def test_a_comparison_limited_to_some_keys_with_its_own_refusal(tmp_path: Path) -> None:
    old = {"chains": [["g1", "g2"]], "variants": ["no-store"], "tool_set": "center"}
    mine = {"chains": [["g1", "g2"]], "variants": ["episode-log"], "tool_set": "shell"}
    refusal = f"{tmp_path} holds a run over other chains; use a fresh --out folder"
    require_same(tmp_path, old, mine, keys=("chains",), refusal=refusal)
    with pytest.raises(MemdirError) as err:
        require_same(tmp_path, old, {**mine, "chains": [["g2"]]}, keys=("chains",), refusal=refusal)
    assert str(err.value) == refusal
    with pytest.raises(MemdirError, match="over other chains"):
        require_same(tmp_path, {"variants": []}, mine, keys=("chains",), refusal=refusal)
