"""Hostile input, second round: a YAML alias bomb in frontmatter or in the tenants file, turn
streams that are huge, not objects, nested 200,000 deep or hold lone surrogates, and the tenants
file's permissions while it is written. Full-size figures: benchmarks/reliability/hostile_input.py.

Every operation that hung before the fix runs in a child process under a timeout, so a
regression fails here instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from tests.conftest import REPO, fm, snapshot
from tests.hostile import alias_bomb
from tests.waits import HANG_GUARD_S

from memdir.cli.main import cli
from memdir.errors import MemdirError
from memdir.mcp import tenants
from memdir.search import analysis
from memdir.store import frontmatter, safeyaml
from memdir.stream import MAX_TURN_BYTES, load_turns
from memdir.tools.wiring import open_store


def memdir(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "memdir", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


# --- the loader ---------------------------------------------------------------------------------


def _nested(depth: int) -> str:
    return "a: " + "[" * depth + "]" * depth


@pytest.mark.parametrize("loader", [yaml.SafeLoader, frontmatter._StringLoader], ids=["safe", "string"])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        (frontmatter.split(alias_bomb())[0], safeyaml.ALIAS_REFUSED),
        ("a: &a [*a]", safeyaml.ALIAS_REFUSED),  # an alias to its own anchor: a cycle
        ("base: &b {k: v}\nother:\n  <<: *b", safeyaml.ALIAS_REFUSED),  # a merge key is an alias too
        (_nested(safeyaml.MAX_DEPTH + 1), safeyaml.DEPTH_REFUSED),
        (_nested(5000), None),  # libyaml's own limit, or the pure-Python parser's RecursionError
    ],
    ids=["bomb", "cycle", "merge", "deep", "very-deep"],
)
def test_loader_refuses_aliases_and_deep_nesting(
    loader: type[yaml.SafeLoader], text: str, why: str | None
) -> None:
    t = time.monotonic()
    with pytest.raises(yaml.YAMLError) as caught:
        safeyaml.load(text, loader)
    assert time.monotonic() - t < HANG_GUARD_S  # a hang guard, not a speed target
    if why is not None:
        assert isinstance(caught.value, safeyaml.RefusedYAML) and str(caught.value) == why


def test_loader_keeps_plain_yaml_and_wraps_construction_errors() -> None:
    assert safeyaml.load("lone: &x anchor\nlist: [1, {k: v}]") == {"lone": "anchor", "list": [1, {"k": "v"}]}
    assert safeyaml.load(_nested(safeyaml.MAX_DEPTH - 1))["a"] is not None
    for text in ("? [a, b]\n: x", "a: !!timestamp 2020-13-45"):  # TypeError / ValueError before
        with pytest.raises(yaml.YAMLError, match="could not be built"):
            safeyaml.load(text, frontmatter._StringLoader)


@pytest.mark.parametrize(
    "text",
    [
        alias_bomb(),
        "---\na: &a [*a]\n---\n",
        "---\n? [a, b]\n: x\n---\n",
        "---\na: !!timestamp 2020-13-45\n---\n",
    ],
    ids=["bomb", "cycle", "unhashable-key", "bad-timestamp"],
)
def test_frontmatter_parse_never_raises_and_indexing_stays_small(text: str) -> None:
    fields = analysis.doc_fields("x.md", text)  # parse, then flatten the metadata
    assert len(fields.metadata) <= len(text)
    assert frontmatter.parse(text).lenient


def test_flatten_is_bounded_on_shared_and_cyclic_values() -> None:
    # the value the old loader built from the bomb: 9 levels of one list shared 9 times
    value: list[Any] = ["x"] * 9
    for _ in range(8):
        value = [value] * 9
    cyclic: list[Any] = ["y"]
    cyclic.append(cyclic)
    t = time.monotonic()
    out = list(analysis._flatten({"bomb": value, "cycle": cyclic}, 1000))
    assert time.monotonic() - t < HANG_GUARD_S  # a hang guard: the output check bounds the work
    assert out == ["bomb", *["x"] * 9, "cycle", "y"]  # each container once
    assert sum(len(s) + 1 for s in analysis._flatten(["abc"] * 10_000, 100)) <= 101


def test_validate_names_the_alias_and_edits_stay_possible() -> None:
    errors = frontmatter.validate(alias_bomb(), "laughs.md")
    assert errors == [f"frontmatter {safeyaml.ALIAS_REFUSED}"]
    # a file already holding one can still be edited: only a rule the edit breaks anew refuses it
    assert frontmatter.validate(alias_bomb().replace("zyzzyva", "edited"), "laughs.md") == errors


# --- through the real tools and CLI -------------------------------------------------------------


def test_create_of_an_alias_bomb_is_refused_and_nothing_written(root: Path) -> None:
    before = snapshot(root)
    args = json.dumps({"path": "/memories/laughs.md", "file_text": alias_bomb()})
    r = memdir("tool", str(root), "--profile", "manage-bm25", "create", args)
    assert r.returncode == 1, r.stderr
    assert "/memories/laughs.md: frontmatter uses a YAML alias" in r.stdout
    assert "write each value out in full" in r.stdout and "Nothing was written" in r.stdout
    assert snapshot(root) == before


@pytest.mark.slow
def test_alias_bomb_on_disk_is_a_finding_not_a_hang(root: Path) -> None:
    (root / "laughs.md").write_text(alias_bomb())
    (root / "vegan.md").write_text(fm("vegan", "diet", "Alice is vegan\n"))
    r = memdir("search", str(root), "vegan")
    assert r.returncode == 0 and "/memories/vegan.md" in r.stdout, r.stderr
    r = memdir("search", str(root), "zyzzyva")  # the file's body is still searchable
    assert r.returncode == 0 and "/memories/laughs.md" in r.stdout, r.stderr
    for command in ("validate", "check"):
        r = memdir(command, str(root))
        assert r.returncode == 1, r.stderr
        assert "/memories/laughs.md" in r.stdout and "YAML alias" in r.stdout
    r = memdir("stats", "--json", str(root))
    assert r.returncode == 0, r.stderr
    # a tool write elsewhere reindexes the store through the observer: it answers too
    args = json.dumps({"path": "/memories/more.md", "file_text": fm("more", "more", "tofu\n")})
    r = memdir("tool", str(root), "--profile", "manage-bm25", "create", args)
    assert r.returncode == 0, r.stdout + r.stderr


# --- the tenants file ---------------------------------------------------------------------------


def test_tenants_file_with_aliases_or_deep_nesting_is_refused(tmp_path: Path) -> None:
    store_root = tmp_path / "mem"
    open_store(store_root, create=True)
    bomb = frontmatter.split(alias_bomb())[0]
    assert bomb is not None
    indented = "\n".join("    " + line for line in bomb.split("\n"))
    entry = f"- token_sha256: {'0' * 64}\n  tenant: t\n  profile: manage\n  root:\n{indented}\n"
    cases = [("bomb.yaml", entry), ("deep.json", "[" * 200_000 + "]" * 200_000)]
    for name, text, why in [(*cases[0], "uses a YAML alias"), (*cases[1], "nested too deep")]:
        f = tmp_path / name
        f.write_text(text)
        with pytest.raises(MemdirError, match="not a valid tenants file") as caught:
            tenants.load(f)
        assert str(f) in str(caught.value) and why in str(caught.value)
        r = memdir("token", "add", "--tenants", str(f), "--root", str(store_root))
        assert r.returncode != 0 and why in r.stderr and "Traceback" not in r.stderr
        assert f.read_text() == text  # left as it was


_SEEN: dict[str, Any] = {"folder": None, "modes": [], "busy": False}


def _watch_modes(event: str, args: tuple[Any, ...]) -> None:
    """While armed: at every file event, the mode of every file in the watched folder."""
    folder = _SEEN["folder"]
    if folder is None or _SEEN["busy"] or event not in ("open", "os.chmod", "os.rename", "os.replace"):
        return
    _SEEN["busy"] = True
    try:
        for name in os.listdir(folder):
            st = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(st.st_mode):
                _SEEN["modes"].append((event, name, stat.S_IMODE(st.st_mode)))
    finally:
        _SEEN["busy"] = False


def test_tenants_file_is_never_readable_by_others(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    store_root = tmp_path / "mem"
    open_store(store_root, create=True)
    sys.addaudithook(_watch_modes)  # stays installed, inert once disarmed
    old_umask = os.umask(0o022)
    _SEEN.update(folder=str(folder), modes=[])
    try:
        tenants.add_token(folder / "tenants.json", str(store_root), "manage")  # creates the file
        tenants.add_token(folder / "tenants.json", str(store_root), "search")  # replaces it
    finally:
        _SEEN["folder"] = None
        os.umask(old_umask)
    modes = _SEEN["modes"]
    temps = [m for m in modes if m[1] != "tenants.json"]
    assert temps and any(m[0] in ("os.rename", "os.replace") for m in temps)  # the temp file, seen
    assert any(m[1] == "tenants.json" for m in modes)
    assert [m for m in modes if m[2] & 0o077] == []
    assert stat.S_IMODE((folder / "tenants.json").stat().st_mode) == 0o600
    assert len(tenants.load(folder / "tenants.json").tokens) == 2


# --- memdir ingest ------------------------------------------------------------------------------


def _ingest(tmp_path: Path, name: str, data: bytes) -> Any:
    f = tmp_path / name
    f.write_bytes(data)
    return CliRunner().invoke(cli, ["ingest", str(tmp_path / "mem"), "--model", "offline", str(f)])


def _turn(text: str, locator: str = "S1T1") -> str:
    return json.dumps({"locator": locator, "speaker": "Alice", "text": text, "date": "2024-01-02"})


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("list.json", b"[1,2,3]", "list.json item 1: a turn is a JSON object"),
        ("deep.json", b"[" * 200_000 + b"]" * 200_000, "deep.json: JSON nested too deep"),
        ("line.jsonl", (_turn("ok") + "\n5\n").encode(), "line.jsonl:2: a turn is a JSON object"),
        (
            "deep.jsonl",
            (_turn("ok") + "\n" + "[" * 100_000 + "]" * 100_000).encode(),
            "deep.jsonl:2: JSON nested",
        ),
        ("bytes.jsonl", (_turn("ok") + "\n").encode() + b'{"text": "\xff"}\n', "bytes.jsonl:2: not UTF-8"),
        (
            "huge.jsonl",
            (_turn("x" * MAX_TURN_BYTES) + "\n").encode(),
            f"huge.jsonl:1: a turn may be at most {MAX_TURN_BYTES // 1024} KiB",
        ),
        (
            "huge.json",
            f"[{_turn('x' * (MAX_TURN_BYTES + 1))}]".encode(),
            "huge.json item 1: a turn may be at most",
        ),
    ],
    ids=["not-objects", "deep-list", "not-object-line", "deep-line", "not-utf8", "long-line", "long-item"],
)
def test_ingest_refuses_bad_streams_naming_the_line(
    tmp_path: Path, name: str, data: bytes, said: str
) -> None:
    res = _ingest(tmp_path, name, data)
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    assert said in res.output and "Traceback" not in res.output
    assert not list((tmp_path / "mem").rglob("*.md"))  # refused before the store was touched


def test_ingest_streams_a_huge_line_without_reading_it(tmp_path: Path) -> None:
    f = tmp_path / "one-turn.jsonl"
    with open(f, "w") as fh:
        fh.write('{"locator": "S1T1", "speaker": "A", "text": "')
        for _ in range(40):
            fh.write("y" * 2**20)  # 40 MB of one turn
        fh.write('"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"one-turn.jsonl:1: a turn may be at most"):
            load_turns(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_TURN_BYTES  # the bound, read once; never the 40 MB line


def test_ingest_repairs_lone_surrogates_and_names_the_turn(tmp_path: Path) -> None:
    lines = [_turn("Alice is vegan \ud800 since 2020"), _turn("fine", "S1T2")]
    assert "\\ud800" in lines[0]  # json.dumps writes the escape, as scraped chat JSON holds it
    CliRunner().invoke(cli, ["init", str(tmp_path / "mem")])
    res = _ingest(tmp_path, "turns.jsonl", ("\n".join(lines) + "\n").encode())
    assert res.exit_code == 0, res.output
    assert "turns.jsonl:1 (S1T1): text held 1 lone surrogate" in res.stderr and "U+FFFD" in res.stderr
    assert "S1T2" not in res.stderr  # only the turn that was repaired is named
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "mem").rglob("*.md"))
    assert "vegan \ufffd since 2020" in written
