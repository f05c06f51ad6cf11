"""Hostile inputs and an access auditor, shared by the path-fuzz tests and the full-size
reliability script (benchmarks/reliability/fuzz_paths.py).

The auditor is a CPython audit hook: while armed, every file-system event the process raises
(open, listdir/scandir, mkdir, rename, remove, link, symlink, rmtree, subprocess) has its paths
checked against the allowed roots. "Zero accesses outside the root" is then a measured fact,
not an inference from outputs.
"""

from __future__ import annotations

import itertools
import os
import random
import secrets
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

_PATH_EVENTS = {
    "open": (0,),
    "os.listdir": (0,),
    "os.scandir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.link": (0, 1),
    "os.symlink": (0, 1),
    "os.chmod": (0,),
    "os.truncate": (0,),
    "shutil.rmtree": (0,),
}


# Written in every file outside the root: no tool result may ever contain it. Drawn at run
# time, because hypothesis also draws string constants it finds in the source: a literal
# marker (the first version looked for the word CANARY) would be generated into a path and
# echoed back in the error message, a false leak.
MARK = "OUTSIDE-SECRET-" + secrets.token_hex(6)


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
        self._on = True

    def disarm(self) -> None:
        self._on = False

    def _ok(self, path: Any, dir_fd: Any = None) -> bool:
        if isinstance(path, int) or path is None:
            return True  # a descriptor: checked when it was opened
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str | os.PathLike):
            return True
        p = os.fspath(path)
        if not os.path.isabs(p):
            return dir_fd is not None or True  # relative to a checked descriptor or the cwd below
        real = os.path.realpath(p)
        return any(real == a or real.startswith(a + os.sep) for a in self.allowed)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self._on:
            return
        if event == "open" and _is_code(args):
            return  # the interpreter importing a module lazily: not a memory access
        if event == "subprocess.Popen":
            self.events += 1
            argv = args[1] if len(args) > 1 else []
            target = argv[-1] if isinstance(argv, list | tuple) and argv else None
            if target is not None and os.path.isabs(os.fsdecode(target)) and not self._ok(target):
                self.violations.append((event, os.fsdecode(target)))
            return
        idx = _PATH_EVENTS.get(event)
        if idx is None:
            return
        self.events += 1
        for i in idx:
            if i < len(args) and not self._ok(args[i]):
                self.violations.append((event, str(args[i])))


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
