"""What memdir creates is its owner's alone under umask 0 too (issue 46, item 7).

docs/api.md promises files 0600 and folders 0700 whatever the umask (a container's is often
0). Each case runs real operations in a child process whose umask is 0, the command line and the
library alike, then walks every tree they made: no entry may carry a group or other bit. Under
umask 0, `token add --tenants new/dir/t.json` made 0777 folders, and `.memdir/` held 0777
journal and index folders of 0666 files (libgit2, git, tantivy and SQLite take the umask).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
NOTE = "---\nname: ann\ndescription: Ann, the sister\n---\n# Ann\n- Ann | city: Oslo [S1T1]\n"


def _run(code: str, cwd: Path) -> None:
    """`code` in a child Python whose umask is 0 from its first line."""
    prelude = "import os, sys\nos.umask(0)\n"
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def _cli(*args: str) -> str:
    return f"subprocess.run([sys.executable, '-m', 'memdir', {', '.join(map(repr, args))}], check=True)\n"


def _shared(top: Path) -> list[str]:
    """Every entry under `top` (itself included) with a group or other permission bit."""
    found = []
    for folder, dirs, files in os.walk(top):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            st = os.lstat(name)
            if not stat.S_ISLNK(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077:
                found.append(f"{stat.S_IMODE(st.st_mode):04o} {os.path.relpath(name, top.parent)}")
    return sorted(set(found))


def test_the_command_line_under_umask_0_makes_nothing_others_can_use(tmp_path: Path) -> None:
    import json

    (tmp_path / "args.json").write_text(json.dumps({"path": "/memories/people/ann.md", "file_text": NOTE}))
    code = "import subprocess\n" + "".join(
        [
            _cli("init", "mem"),
            _cli("token", "add", "mem", "--tenants", "new/dir/t.json"),
            _cli("tool", "mem", "create", "@args.json"),
            _cli("search", "mem", "Oslo"),
            _cli("history", "mem"),
            _cli("check", "mem"),
        ]
    )
    _run(code, tmp_path)
    assert (tmp_path / "new" / "dir" / "t.json").is_file()
    assert (tmp_path / "mem" / ".memdir" / "journal.git").is_dir()
    assert _shared(tmp_path / "new") + _shared(tmp_path / "mem") == []


def test_the_library_under_umask_0_makes_nothing_others_can_use(tmp_path: Path) -> None:
    """A program's own umask is its business, but what memdir makes for it is private: the
    journal (libgit2, git), the index (tantivy, SQLite), locks, logs, the tenants file."""
    code = f"""
        from memdir import Memory
        from memdir.mcp import tenants
        ann = "/memories/people/ann.md"
        with Memory("mem") as mem:
            assert not mem.call("create", {{"path": ann, "file_text": {NOTE!r}}}).is_error
            edit = {{"path": ann, "old_str": "Oslo", "new_str": "Bergen"}}
            assert not mem.call("str_replace", edit).is_error
            assert mem.search("Bergen")
            assert len(mem.history()) >= 2
        tenants.add_token("new/dir/t.json", "mem", "search")
        from memdir.store.store import Store
        from memdir.store.workcopy import scratch_copy
        with scratch_copy(Store("mem")) as copy:  # a role's throwaway copy, under .memdir/
            shared = [os.path.join(d, n) for d, ds, fs in os.walk("mem") for n in ds + fs
                      if os.lstat(os.path.join(d, n)).st_mode & 0o077]
            assert copy.root.is_dir() and not shared, shared
    """
    _run(code, tmp_path)
    assert (tmp_path / "mem" / ".memdir" / "index").is_dir()
    assert _shared(tmp_path / "new") + _shared(tmp_path / "mem") == []
