"""The shell's working copy and mirror on trees deeper than memory holds (MAX_DEPTH folder
levels): one `bash` call that made a 2,200-level tree used to make every later call raise
RecursionError until the copy was deleted by hand, and `rm -rf` of a 1,100-level tree was not
carried back. Real sandbox, real files."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.tools.test_shell import bash, env  # noqa: F401  (the fixture)

from memdir.store.paths import MAX_DEPTH, STATE_DIR
from memdir.store.safefs import remove_tree
from memdir.tools.profiles import Harness
from memdir.tools.sandbox import ShellLimits, _probe

pytestmark = pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")

DIRS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@pytest.fixture(autouse=True)
def _no_deep_leftovers(tmp_path: Path) -> Iterator[None]:
    """Remove the test's folders iteratively afterwards, even when it failed: pytest's own
    cleanup of old temp folders recurses per level and breaks on a tree deeper than ~1,000."""
    yield
    fd = os.open(tmp_path, DIRS)
    try:
        for name in os.listdir(fd):
            if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                remove_tree(fd, name)
    finally:
        os.close(fd)


def deep_tree(parent: Path, name: str, levels: int, leaf: str = "") -> None:
    """`name/d/d/.../d` under `parent`, `levels` folders in all, made through descriptors (the
    path is far longer than PATH_MAX); `leaf` names a file written in the deepest one."""
    fd = os.open(parent, DIRS)
    try:
        for i in range(levels):
            part = name if i == 0 else "d"
            os.mkdir(part, dir_fd=fd)
            nfd = os.open(part, DIRS, dir_fd=fd)
            os.close(fd)
            fd = nfd
        if leaf:
            out = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(out, b"---\nname: x\ndescription: deep\n---\nbottom\n")
            os.close(out)
    finally:
        os.close(fd)


def depth_of(top: Path) -> int:
    """The most folder levels below `top`, walked through descriptors without recursion."""
    most, stack = 0, [(os.open(top, DIRS), 0)]
    while stack:
        fd, level = stack.pop()
        most = max(most, level)
        try:
            for ent in os.scandir(fd):
                if ent.is_dir(follow_symlinks=False) and not (level == 0 and ent.name == STATE_DIR):
                    stack.append((os.open(ent.name, DIRS, dir_fd=fd), level + 1))
        finally:
            os.close(fd)
    return most


MAKE_2200 = (
    'p=$(printf "d/%.0s" $(seq 100)); '
    'for i in $(seq 22); do mkdir -p "$p" && cd "$p" || exit 9; done; echo made'
)


@pytest.mark.slow  # the command itself takes 10-20 s: the kernel resolves 2,200 levels
def test_a_2200_level_tree_is_refused_and_later_calls_work(env: dict[str, Any]) -> None:  # noqa: F811
    root: Path = env["root"]
    out = bash(env, "mkdir keep && echo hi > keep/n.md && " + MAKE_2200)
    assert "made" in out and f"deeper than {MAX_DEPTH} folder levels" in out and "not kept" in out
    assert (root / "keep" / "n.md").read_text() == "hi\n"  # the rest of the command's work landed
    assert depth_of(root) <= MAX_DEPTH  # nothing deeper than memory holds reached the root
    assert depth_of(root / STATE_DIR / "shell" / "copy") <= MAX_DEPTH  # nor stays in the copy
    later = bash(env, "echo still-working; ls")
    assert "still-working" in later and "keep" in later


def test_a_deep_copy_left_behind_heals_itself(env: dict[str, Any]) -> None:  # noqa: F811
    """A working copy an older memdir left 2,200 levels deep (or a crash mid-call): the next
    call works without anyone deleting `.memdir/shell/copy` by hand."""
    root: Path = env["root"]
    bash(env, "true")  # the copy exists
    deep_tree(root / STATE_DIR / "shell" / "copy", "junk", 2200)
    out = bash(env, "echo fine; ls")
    assert "fine" in out and "junk" not in out.split("[exit")[0]
    assert not (root / "junk").exists()


def test_rm_rf_of_a_1100_level_tree_is_carried_back(env: dict[str, Any]) -> None:  # noqa: F811
    """A tree deeper than memory holds, written outside the tools: the shell sees its first
    MAX_DEPTH levels, and removing it removes all of it, at any depth."""
    root: Path = env["root"]
    deep_tree(root, "deep", 1100, leaf="bottom.md")
    (root / "deep" / "top.md").write_text("---\nname: top\ndescription: t\n---\ntop\n")
    assert "top.md" in bash(env, "ls deep")
    bash(env, "rm -rf deep")
    assert not (root / "deep").exists()
    assert "deep" not in bash(env, "ls")
    assert sorted(os.listdir(root / "people")) == ["alice.md", "bob.md"]


def test_every_call_after_a_refused_tree_is_an_ordinary_result(env: dict[str, Any]) -> None:  # noqa: F811
    harness = Harness(env["store"], "shell", config={"shell": ShellLimits()})
    make_300 = 'p=$(printf "d/%.0s" $(seq 100)); for i in 1 2 3; do mkdir -p "$p" && cd "$p"; done'
    for command in (make_300, "cd d && rm -rf d && echo cut", "ls -R | wc -l"):
        result = harness.call("bash", {"command": command})
        assert not result.is_error, result.text
        assert depth_of(env["root"]) <= MAX_DEPTH
