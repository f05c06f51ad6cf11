"""Hostile inputs and an access auditor, shared by the path-fuzz tests and the full-size
reliability script (benchmarks/reliability/fuzz_paths.py).

The auditor is a CPython audit hook: while armed, every file-system event the process raises
(open, listdir/scandir, mkdir, rename, remove, link, symlink, rmtree, subprocess) has its paths
checked against the allowed roots. "Zero accesses outside the root" is then a measured fact,
not an inference from outputs.
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

# Made at run time: hypothesis draws string literals from source code, so a literal canary
# would turn up in generated paths and be echoed back in error texts (a false leak).
CANARY = "cnry" + secrets.token_hex(12)

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


class AccessAuditor:
    """Records file-system paths touched while armed that are outside the allowed roots."""

    _installed: AccessAuditor | None = None

    def __init__(self) -> None:
        self.allowed: list[str] = []
        self.violations: list[tuple[str, str]] = []
        self.events = 0
        self._armed = threading.local()

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
        self._armed.on = True

    def disarm(self) -> None:
        self._armed.on = False

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
        if not getattr(self._armed, "on", False):
            return
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
    # Written once: a process spawned later (with its own CANARY) must not replace the token.
    if not (outside / "canary.md").exists():
        (outside / "canary.md").write_text(f"---\nname: canary\ndescription: {CANARY}\n---\n{CANARY}\n")
    if not (outside / "passwd").exists():
        (outside / "passwd").write_text(f"root:x:0:0:{CANARY}\n")
    for name, target in (("link_out", outside), ("link_file.md", outside / "canary.md")):
        if not (root / name).is_symlink():
            os.symlink(target, root / name)
    if not (root / "hard.md").exists():
        os.link(outside / "canary.md", root / "hard.md")
