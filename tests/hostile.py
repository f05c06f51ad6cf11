"""Hostile inputs and an access auditor, shared by the path-fuzz tests and the full-size
reliability script (benchmarks/reliability/fuzz_paths.py).

The auditor is a CPython audit hook: while armed, every file-system event the process raises
(open, listdir/scandir, mkdir, rename, remove, link, symlink, chmod, truncate, rmtree,
subprocess) has its paths checked against the allowed roots. "Zero accesses outside the root"
is then a measured fact, not an inference from outputs.

A path is resolved as the operation resolves it: an absolute name as it stands; a relative
name against the directory descriptor the call names (read back from /proc/self/fd), else the
working directory; a descriptor passed in place of a path is read back the same way. An
operation that does not follow a link in its last component (remove, rename, mkdir, rmdir,
rmtree, the name a link is made at, an open with O_NOFOLLOW) is checked by the folder that
holds the entry; the rest by the entry's real path. The audit event of `os.open` omits its
`dir_fd`, so while armed `os.open` is a pass-through that notes `dir_fd` for the hook.
"""

from __future__ import annotations

import itertools
import os
import random
import secrets
import sys
import threading
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

_FOLLOW, _NOFOLLOW = True, False
# event -> (index of a path argument, index of the dir_fd it is relative to or None, follows a
# link in its last component). "os.replace" raises "os.rename"; os.unlink raises "os.remove".
_PATH_EVENTS: dict[str, tuple[tuple[int, int | None, bool], ...]] = {
    "open": ((0, None, _FOLLOW),),  # dir_fd noted by the os.open pass-through; flags decide follow
    "os.listdir": ((0, None, _FOLLOW),),
    "os.scandir": ((0, None, _FOLLOW),),
    "os.mkdir": ((0, 2, _NOFOLLOW),),
    "os.rename": ((0, 2, _NOFOLLOW), (1, 3, _NOFOLLOW)),
    "os.remove": ((0, 1, _NOFOLLOW),),
    "os.rmdir": ((0, 1, _NOFOLLOW),),
    "os.link": ((0, 2, _FOLLOW), (1, 3, _NOFOLLOW)),  # os.link follows a linked source by default
    "os.symlink": ((1, 2, _NOFOLLOW),),  # the link's target text: checked in _hook
    "os.chmod": ((0, 2, _FOLLOW),),
    "os.truncate": ((0, None, _FOLLOW),),
    "shutil.rmtree": ((0, 1, _NOFOLLOW),),
}


# Written in every file outside the root: no tool result may ever contain it. Drawn at run
# time, because hypothesis also draws string constants it finds in the source: a literal
# marker (the first version looked for the word CANARY) would be generated into a path and
# echoed back in the error message, a false leak.
MARK = "OUTSIDE-SECRET-" + secrets.token_hex(6)

_REAL_OS_OPEN = os.open
_NOTED = threading.local()  # the dir_fd of the os.open call in progress on this thread


def _noting_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
    """`os.open`, unchanged, except that the audit hook can see which dir_fd it was given."""
    _NOTED.dir_fd = dir_fd
    try:
        return _REAL_OS_OPEN(path, flags, mode, dir_fd=dir_fd)
    finally:
        _NOTED.dir_fd = None


def _descriptor_path(fd: int) -> str | None:
    """The path a descriptor refers to now, or None if it names no file-system object (a pipe,
    a socket) or is not open (then the call fails without touching anything)."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    if not target.startswith("/"):
        return None  # "pipe:[...]", "socket:[...]", "anon_inode:..."
    return target.removesuffix(" (deleted)")


class AccessAuditor:
    """Records file-system paths touched while armed that are outside the allowed roots."""

    _installed: AccessAuditor | None = None

    def __init__(self) -> None:
        self.allowed: list[str] = []
        self.violations: list[tuple[str, str]] = []
        self.events = 0
        # Process-wide, not per thread: the MCP server runs each tool call in a worker thread.
        self._on = False

    @classmethod
    def install(cls) -> AccessAuditor:
        if cls._installed is None:
            cls._installed = cls()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def arm(self, roots: Iterable[Path]) -> None:
        self.allowed = [os.path.realpath(r) for r in roots]
        self.violations.clear()
        self.events = 0
        os.open = _noting_open
        self._on = True

    def disarm(self) -> None:
        self._on = False
        os.open = _REAL_OS_OPEN

    def _inside(self, real: str) -> bool:
        return any(real == a or real.startswith(a + os.sep) for a in self.allowed)

    def _resolve(self, path: Any, dir_fd: Any, follow: bool) -> str | None:
        """The absolute real path the operation reaches, or None where it reaches no file."""
        if isinstance(path, int):
            return _descriptor_path(path)  # the object itself: nothing left to follow
        if path is None:
            path = "."  # os.listdir() and os.scandir(): the working directory
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str | os.PathLike):
            return None
        p = os.fspath(path)
        if isinstance(p, bytes):
            p = os.fsdecode(p)
        if not os.path.isabs(p):
            base = os.getcwd() if dir_fd is None or dir_fd < 0 else _descriptor_path(dir_fd)
            if base is None:
                return None  # a bad dir_fd: the call fails with EBADF
            p = os.path.join(base, p)
        head, name = os.path.split(p.rstrip(os.sep) or os.sep)
        if follow or name in ("", ".", ".."):
            return os.path.realpath(p)
        return os.path.join(os.path.realpath(head), name)  # the entry itself, not its target

    def _check(self, event: str, path: Any, dir_fd: Any = None, follow: bool = True) -> None:
        real = self._resolve(path, dir_fd, follow)
        if real is not None and not self._inside(real):
            given = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else None
            self.violations.append((event, given if given and os.path.isabs(given) else real))

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self._on:
            return
        if event == "open" and _is_code(args):
            return  # the interpreter importing a module lazily: not a memory access
        if event == "subprocess.Popen":
            self.events += 1
            argv = args[1] if len(args) > 1 else []
            target = argv[-1] if isinstance(argv, list | tuple) and argv else None
            if target is not None and os.path.isabs(os.fsdecode(target)):
                self._check(event, target)
            return
        spec = _PATH_EVENTS.get(event)
        if spec is None:
            return
        self.events += 1
        for i, fd_i, follow in spec:
            if i >= len(args):
                continue
            if event == "open":  # (path, mode, flags); mode is None when os.open raised it
                dir_fd = getattr(_NOTED, "dir_fd", None) if args[1] is None else None
                flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
                exclusive = flags & os.O_CREAT and flags & os.O_EXCL  # made new: never a link
                self._check(event, args[0], dir_fd, not (flags & os.O_NOFOLLOW or exclusive))
                continue
            self._check(event, args[i], args[fd_i] if fd_i is not None and fd_i < len(args) else None, follow)
        if event == "os.symlink" and isinstance(args[0], str | bytes):
            # a link leading out is a way out for whoever follows it: its target is checked
            # from the folder the link is made in
            target = os.fsdecode(args[0])
            if not os.path.isabs(target):
                link = self._resolve(args[1], args[2] if len(args) > 2 else None, _NOFOLLOW)
                if link is None:
                    return
                target = os.path.join(os.path.dirname(link), target)
            self._check(event, target)


_CODE_DIRS = tuple(os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, *sys.path) if p)


def _is_code(args: tuple[Any, ...]) -> bool:
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    if not isinstance(path, str) or not isinstance(mode, str) or any(c in mode for c in "wax+"):
        return False
    return path.endswith((".py", ".pyc", ".so")) and os.path.realpath(path).startswith(_CODE_DIRS)


def _spellings_of_dotdot() -> list[str]:
    forms = [
        "..",
        "%2e%2e",
        "%2E%2E",
        ".%2e",
        "%2e.",
        "．．",
        "\u2024\u2024",
        "..%2f",
        "..\\",
        "%252e%252e",
        "....",
    ]
    return forms + [unicodedata.normalize(n, "．．") for n in ("NFC", "NFD", "NFKC", "NFKD")]


SEGMENTS = [
    *_spellings_of_dotdot(),
    ".",
    "",
    "etc",
    "passwd",
    "memories",
    "memoriesX",
    ".memdir",
    ".git",
    ".hidden.md",
    "link_out",
    "link_file.md",
    "hard.md",
    "people",
    "alice.md",
    "MEMORY.md",
    "a" * 256,
    "ü.md",
    "u\u0308.md",
    "CON",
    "NUL.md",
    "a\x00b.md",
    "a\nb.md",
    "~",
    "$HOME",
    "*",
    "%00",
    "%2fetc",
    "\\etc",
    "\u202e",
    "x" * 40 + ".md",
]
PREFIXES = [
    "/memories",
    "/memories/",
    "/memoriesX",
    "memories",
    "",
    "/",
    "//memories",
    "/memories/./",
    "\\memories",
    " /memories",
]


PLAUSIBLE = [
    "/memories",
    "/memories/people",
    "/memories/people/alice.md",
    "/memories/people/new-note.md",
    "/memories/new-dir/x.md",
    "/memories/MEMORY.md",
    "/memories/link_out",
    "/memories/link_out/canary.md",
    "/memories/link_file.md",
    "/memories/hard.md",
    "/memories/people/../link_out/canary.md",
]


def paths() -> st.SearchStrategy[str]:
    """Hostile spellings, plus plausible paths so that real reads and writes race the links."""
    seg = st.one_of(st.sampled_from(SEGMENTS), st.text(max_size=12))
    hostile = st.builds(
        lambda prefix, segs, tail: prefix + "/".join(["", *segs])[1 if prefix.endswith("/") else 0 :] + tail,
        st.sampled_from(PREFIXES),
        st.lists(seg, max_size=6),
        st.sampled_from(["", "/", ".md", "/..", "%00"]),
    )
    return st.one_of(hostile, st.sampled_from(PLAUSIBLE))


def tool_calls() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    p = paths()
    text = st.one_of(st.text(max_size=40), st.just("---\nname: x\ndescription: d\n---\n"))
    return st.one_of(
        st.tuples(st.just("view"), st.fixed_dictionaries({"path": p})),
        st.tuples(
            st.just("view"),
            st.fixed_dictionaries(
                {"path": p, "start_line": st.integers(-3, 50), "end_line": st.integers(-3, 50)}
            ),
        ),
        st.tuples(st.just("create"), st.fixed_dictionaries({"path": p, "file_text": text})),
        st.tuples(
            st.just("str_replace"), st.fixed_dictionaries({"path": p, "old_str": text, "new_str": text})
        ),
        st.tuples(
            st.just("insert"),
            st.fixed_dictionaries({"path": p, "insert_line": st.integers(-2, 20), "insert_text": text}),
        ),
        st.tuples(st.just("delete"), st.fixed_dictionaries({"path": p})),
        st.tuples(st.just("rename"), st.fixed_dictionaries({"old_path": p, "new_path": p})),
        st.tuples(
            st.just("grep"),
            st.fixed_dictionaries({"pattern": st.sampled_from(["root", "x", "."]), "path": p}),
        ),
        st.tuples(st.just("toc"), st.fixed_dictionaries({"path": p})),
        st.tuples(
            st.just("section_read"),
            st.fixed_dictionaries({"path": p, "section_path": st.sampled_from(["# A", "# A > ## B"])}),
        ),
    )


def plant(root: Path, outside: Path) -> None:
    """Links planted as another process would: a folder link and a file link leading out,
    a hard link to an outside file, and a canary outside."""
    outside.mkdir(parents=True, exist_ok=True)
    if not (outside / "canary.md").exists():  # written once: a spawned flipper has its own MARK
        (outside / "canary.md").write_text(
            f"---\nname: canary\ndescription: {MARK} canary\n---\nsecret {MARK}\n"
        )
        (outside / "passwd").write_text(f"root:x:0:0:{MARK}\n")
    for name, target in (("link_out", outside), ("link_file.md", outside / "canary.md")):
        if not (root / name).is_symlink():
            os.symlink(target, root / name)
    if not (root / "hard.md").exists():
        os.link(outside / "canary.md", root / "hard.md")


# -- a seeded generator for the full-size run -----------------------------------------------
# Hypothesis shrinks and explores well but spends ~4 ms per example drawing data (6+ minutes
# for 100,000 on a loaded 2-core machine); the full run draws from the same component lists
# with a seeded `random.Random`, so it is fast and reproducible. CI keeps hypothesis.

_ALPHABETS = (
    "abcxyz-_.md/",
    "\u2024\u2025\uff0e\uff0f\u2215\u2044\u29f8\\%",  # dot and slash look-alikes
    "\u0300\u0301\u0308\u200b\u200d\ufeff\u202e",  # combining marks, zero-width, bidi
    "\x00\x01\n\r\t ",
    "éüßİıǅﬁ",  # case folding and compatibility forms
)


def _random_text(rng: random.Random, max_size: int) -> str:
    alphabet = rng.choice(_ALPHABETS)
    n = rng.randrange(max_size + 1)
    if rng.random() < 0.2:  # anything at all, surrogates excluded (not valid in JSON text)
        return "".join(
            chr(rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0xA0, 0xD800)))) for _ in range(n)
        )
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_path(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return rng.choice(PLAUSIBLE)
    prefix = rng.choice(PREFIXES)
    segs = [
        rng.choice(SEGMENTS) if rng.random() < 0.75 else _random_text(rng, 12)
        for _ in range(rng.randrange(7))
    ]
    body = "/".join(["", *segs])
    if prefix.endswith("/"):
        body = body[1:]
    return prefix + body + rng.choice(["", "/", ".md", "/..", "%00"])


def random_tool_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One call drawn like `tool_calls()` draws it, plus the BM25 tools."""
    p = lambda: random_path(rng)  # noqa: E731 - a fresh path per argument
    text = lambda: "---\nname: x\ndescription: d\n---\n" if rng.random() < 0.2 else _random_text(rng, 40)  # noqa: E731
    kind = rng.randrange(13)
    if kind == 0:
        return "view", {"path": p()}
    if kind == 1:
        return "view", {"path": p(), "start_line": rng.randint(-3, 50), "end_line": rng.randint(-3, 50)}
    if kind == 2:
        return "create", {"path": p(), "file_text": text()}
    if kind == 3:
        return "str_replace", {"path": p(), "old_str": text(), "new_str": text()}
    if kind == 4:
        return "insert", {"path": p(), "insert_line": rng.randint(-2, 20), "insert_text": text()}
    if kind == 5:
        return "delete", {"path": p()}
    if kind == 6:
        return "rename", {"old_path": p(), "new_path": p()}
    if kind in (7, 8):
        return "grep", {"pattern": rng.choice(["root", "x", ".", "secret", "name"]), "path": p()}
    if kind == 9:
        return "toc", {"path": p()}
    if kind == 10:
        return "section_read", {"path": p(), "section_path": rng.choice(["# A", "# A > ## B"])}
    if kind == 11:
        return "bm25_full_search", {"query": rng.choice(["secret canary", "root", "alice"]), "path": p()}
    return "bm25_chunk_retrieve", {"query": rng.choice(["secret canary", "root", "alice"])}


def alias_bomb(name: str = "laughs", levels: int = 9, width: int = 9) -> str:
    """A memory file whose frontmatter is the "billion laughs" shape: `levels` anchors, each a
    list of `width` aliases to the one before, so under 400 bytes name width**levels values."""
    anchors = "abcdefghijklmnopqrstuvwxyz"[:levels]
    lines = ["---", f"name: {name}", "description: lol", "a: &a [" + ",".join(['"x"'] * width) + "]"]
    lines += [f"{b}: &{b} [" + ",".join([f"*{a}"] * width) + "]" for a, b in itertools.pairwise(anchors)]
    return "\n".join([*lines, "---", "body zyzzyva", ""])
