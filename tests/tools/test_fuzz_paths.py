"""Path fuzzing (fast subset): generated hostile paths against every tool, in process and
through MCP; an audit hook proves no file-system access leaves the root. The full run
(>=100,000 calls) is benchmarks/reliability/fuzz_paths.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from mcp import Client
from tests.hostile import MARK, AccessAuditor, plant, tool_calls

from memdir.mcp.server import build_server
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.store.journal.commitd import poke
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("fuzz")
    root, outside = base / "mem", base / "outside"
    spec.init(open_store(root, create=True))
    plant(root, outside)
    return base, root, outside


def _outside_state(outside: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def _check_call(auditor: AccessAuditor, harness: Harness, root: Path, name: str, args: dict[str, Any]) -> str:
    auditor.arm([root])
    try:
        res = harness.call(name, args)
    finally:
        auditor.disarm()
    assert not auditor.violations, (name, args, auditor.violations)
    assert MARK not in res.text, (name, args, res.text)
    return res.text


def test_fuzz_tools_in_process(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    before = _outside_state(outside)
    auditor = AccessAuditor.install()
    harness = Harness(open_store(root), "manage")
    search = Harness(open_store(root), "search")
    # A writing step starts this process's journal committer, a process whose command line
    # names memdir's own folder: started here, before any call is audited, so the verdict does
    # not hang on whether an earlier test in this worker started one.
    assert poke(Journal(root).git_dir)

    @SETTINGS
    @given(tool_calls())
    def run(call: tuple[str, dict[str, Any]]) -> None:
        name, args = call
        h = search if name in ("toc", "section_read") else harness
        _check_call(auditor, h, root, name, args)
        if not (root / "MEMORY.md").exists():
            spec.init(open_store(root))  # a fuzzed delete may remove it; keep the arena a memory
        plant(root, outside)  # a fuzzed delete or rename may remove the plants: put them back

    run()
    assert _outside_state(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == ["canary.md", "passwd"]


def test_fuzz_tools_over_mcp(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    before = _outside_state(outside)
    harness = Harness(open_store(root), "manage")

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tool_calls())
    def run(call: tuple[str, dict[str, Any]]) -> None:
        name, args = call
        if name in ("toc", "section_read"):
            return

        async def go() -> str:
            async with Client(build_server(harness)) as client:
                r = await client.call_tool(name, args)
                return "".join(getattr(c, "text", "") for c in r.content)

        text = anyio.run(go)
        assert MARK not in text
        plant(root, outside)

    run()
    assert _outside_state(outside) == before
    shutil.rmtree(root / ".memdir", ignore_errors=True)


def test_auditor_catches_an_outside_access(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    (root / "probe.md").write_text("inside\n")  # the fuzz tests may have deleted anything else
    auditor = AccessAuditor.install()
    auditor.arm([root])
    try:
        (outside / "canary.md").read_bytes()
        (root / "probe.md").read_bytes()
    finally:
        auditor.disarm()
    assert [v[1] for v in auditor.violations] == [str(outside / "canary.md")]


def test_auditor_resolves_relative_names_and_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names relative to a directory descriptor or the working directory, and descriptors in
    place of paths, are resolved as the call resolves them. The auditor used to pass every
    relative name and every descriptor unchecked, so it never saw the store's own kind of access
    (a name under a directory descriptor) leave the root; the first block below records
    nothing on that version."""
    import os

    root, outside = tmp_path / "mem", tmp_path / "outside"
    spec.init(open_store(root, create=True))
    plant(root, outside)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    out_fd = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    in_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    auditor = AccessAuditor.install()
    escapes = {
        "under an outside descriptor": lambda: os.close(os.open("canary.md", flags, dir_fd=out_fd)),
        "made under an outside descriptor": lambda: os.mkdir("made", dir_fd=out_fd),
        "removed under an outside descriptor": lambda: os.rmdir("made", dir_fd=out_fd),
        "an outside descriptor listed": lambda: os.listdir(out_fd),
        "relative to an outside cwd": lambda: Path("canary.md").read_bytes(),
        "the cwd listed": lambda: list(os.scandir()),
        "through a link, followed": lambda: os.close(os.open("link_file.md", os.O_RDONLY, dir_fd=in_fd)),
    }
    try:
        for what, act in escapes.items():
            monkeypatch.chdir(outside if "cwd" in what else root)
            auditor.arm([root])
            try:
                act()
            finally:
                auditor.disarm()
            assert auditor.violations, f"{what}: not seen"
            assert all(v[1].startswith(str(outside)) for v in auditor.violations), (what, auditor.violations)

        # the same kinds of call inside the root, and links used without following them
        monkeypatch.chdir(root)
        auditor.arm([root])
        try:
            os.close(os.open("MEMORY.md", flags, dir_fd=in_fd))
            os.mkdir("made", dir_fd=in_fd)
            os.rmdir("made", dir_fd=in_fd)
            os.listdir(in_fd)
            Path("MEMORY.md").read_bytes()
            list(os.scandir())
            with pytest.raises(OSError):  # ELOOP: the link is refused, not followed
                os.open("link_file.md", flags, dir_fd=in_fd)
            os.rename("link_out", "link_moved", src_dir_fd=in_fd, dst_dir_fd=in_fd)
            os.remove("link_moved", dir_fd=in_fd)
        finally:
            auditor.disarm()
        assert auditor.violations == [] and auditor.events >= 9
    finally:
        os.close(out_fd)
        os.close(in_fd)


def test_index_scan_never_lists_through_a_folder_swapped_for_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's stat walk (search/scan.py) races another process that swaps a folder for a
    link between the listing and the descent: the 100k fuzz run caught a path-based walk
    listing the link's target. The swap is made deterministic by doing it inside the listing."""
    import os

    from memdir.search import scan as scan_mod

    root, outside = tmp_path / "mem", tmp_path / "outside"
    spec.init(open_store(root, create=True))
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\n")
    plant(root, outside)
    real = os.scandir

    class Swapped:
        def __init__(self, arg: Any) -> None:
            with real(arg) as it:
                self.entries = list(it)
            if (root / "people").is_dir() and not (root / "people").is_symlink():
                os.rename(root / "people", root / "people-parked")  # another process, mid-walk
                os.symlink(outside, root / "people")

        def __enter__(self) -> list[Any]:
            return self.entries

        def __exit__(self, *exc: Any) -> None:
            pass

        def __iter__(self) -> Any:
            return iter(self.entries)

    monkeypatch.setattr(scan_mod.os, "scandir", Swapped)
    auditor = AccessAuditor.install()
    auditor.arm([root])
    try:
        found = scan_mod.scan(root)
    finally:
        auditor.disarm()
    assert [v for v in auditor.violations if v[0] == "os.scandir"] == []  # (the swap itself is ours)
    assert not any(p.startswith("/memories/people/") for p in found), found
    assert "/memories/MEMORY.md" in found


_SWAP: dict[str, Any] = {}


def _swap_at_open(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook that, once armed, swaps a folder for a link to outside just before the
    first open naming it: another process acting at the worst moment, made deterministic."""
    if event != "open" or not _SWAP.get("armed"):
        return
    target = args[0]
    if isinstance(target, str) and ("people" in target or target == "alice.md"):
        import os

        _SWAP["armed"] = False
        root, outside = _SWAP["root"], _SWAP["outside"]
        os.rename(root / "people", root / "people-parked")
        os.symlink(outside, root / "people")


def test_index_never_reads_through_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """The index read a file by path after checking it; the fuzz run caught that open resolving
    outside. Outside content must never reach the index (its terms would steer rankings)."""
    import sys

    from memdir.search.index import SearchIndex

    root, outside = tmp_path / "mem", tmp_path / "outside"
    store = open_store(root, create=True)
    spec.init(store)
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\ninside words\n")
    outside.mkdir()
    (outside / "alice.md").write_text("---\nname: alice\ndescription: a\n---\nzanzibaroutside\n")
    index = SearchIndex.for_store(store)
    index.sync()
    if not _SWAP.get("installed"):
        sys.addaudithook(_swap_at_open)
        _SWAP["installed"] = True
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\nedited words\n")
    _SWAP.update(root=root, outside=outside, armed=True)
    try:
        index.apply(["/memories/people/alice.md"])
    finally:
        _SWAP["armed"] = False
    assert index.search("zanzibaroutside", sync=False) == []


def _swap_at_spawn(event: str, args: tuple[Any, ...]) -> None:
    if event == "subprocess.Popen" and _SWAP.get("spawn"):
        import os

        _SWAP["spawn"] = False
        root, outside = _SWAP["root"], _SWAP["outside"]
        os.rename(root / "people", root / "people-parked")
        os.symlink(outside, root / "people")


@pytest.mark.skipif(not __import__("shutil").which("rg"), reason="ripgrep not installed")
def test_ripgrep_never_starts_on_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """grep checked the folder, then started ripgrep on its path: the fuzz run's audit hook saw
    ripgrep spawned on a folder that was a link at that instant. ripgrep now gets the folder as
    /proc/self/fd/N of a descriptor opened without following links."""
    import sys

    root, outside = tmp_path / "mem", tmp_path / "outside"
    spec.init(open_store(root, create=True))
    (root / "people").mkdir()
    (root / "people" / "alice.md").write_text("---\nname: alice\ndescription: a\n---\ninside line\n")
    outside.mkdir()
    (outside / "bob.md").write_text(f"---\nname: bob\ndescription: b\n---\n{MARK} line\n")
    if not _SWAP.get("spawn_installed"):
        sys.addaudithook(_swap_at_spawn)
        _SWAP["spawn_installed"] = True
    harness = Harness(open_store(root), "manage")
    auditor = AccessAuditor.install()
    _SWAP.update(root=root, outside=outside, spawn=True)
    auditor.arm([root])
    try:
        res = harness.call("grep", {"pattern": "line", "path": "/memories/people"})
    finally:
        auditor.disarm()
        _SWAP["spawn"] = False
    assert (root / "people").is_symlink()  # the swap happened, before ripgrep started
    assert MARK not in res.text
    assert [v for v in auditor.violations if v[0] != "os.symlink"] == []  # (the swap itself is ours)
    # a file target and a subfolder still work
    (root / "people").unlink()
    (root / "people-parked").rename(root / "people")
    res = harness.call("grep", {"pattern": "inside", "path": "/memories/people/alice.md"})
    assert "/memories/people/alice.md:5: inside line" in res.text
