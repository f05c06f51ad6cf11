"""The Anthropic SDK's own tests of its filesystem memory tool, run against memdir's adapter.

    .venv/bin/python benchmarks/anthropic_sdk_tests.py [--version 2.17.0] [--keep DIR]

Fetches the SDK's source distribution with pip into a temp folder at run time (nothing of it is
kept in this repository), takes `tests/lib/tools/memory_tools/test_filesystem.py` out of it
and runs it with pytest beside a shim (written here, below) that swaps memdir in:
the SDK module's `BetaLocalFilesystemMemoryTool` and `BetaAsyncLocalFilesystemMemoryTool` become
memdir's adapters over `Memory(BASE/memories)`, the SDK's own layout, and the test module's
`get_directory_snapshot` reads the store with memdir's documented differences taken out of the
way (docs/serving.md, "The Anthropic memory tool"): a stored memory file name is read back as
the name Claude gave, the frontmatter memdir adds is left out, and `MEMORY.md` and `.memdir/`
are not Claude's files. Reply texts are memdir's own (they name the stored path and say what
was done), so three kinds of assertion in the file are rewritten, by its syntax tree, to what
they check besides wording: `pytest.raises(ToolError, match=...)` keeps `ToolError` and drops
`match`; `result == "..."` compares the numbered lines both show (all of them; a reply with
none, such as "File created successfully", is not compared); and a listing's header sentence
is not looked for. Everything else, every snapshot and byte check, is the SDK's as written.

Prints how many pass and names every failure with its reason; a failure no reason below
explains makes the script exit 1. Needs network access for pip and the SDK installed at the
same version (the `anthropic` dependency).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

TEST_FILE = "tests/lib/tools/memory_tools/test_filesystem.py"

SHIM = r'''"""memdir's Anthropic adapter in the SDK helper's place (benchmarks/anthropic_sdk_tests.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from anyio import Path as AsyncPath

import anthropic.lib.tools._beta_builtin_memory_tool as sdk
from memdir import Memory
from memdir.integrations.anthropic_memory import MemdirAsyncMemoryTool, MemdirMemoryTool
from memdir.store import frontmatter

# {store file on disk: the path Claude named it by}, for every name the adapter mapped
CLAUDE_NAMES: dict[str, str] = {}


OPEN: list[Memory] = []


def _memory(base_path: str) -> Memory:
    """The store where the SDK keeps its files, BASE/memories, made as memdir makes a root."""
    OPEN.append(Memory(Path(base_path) / "memories"))
    return OPEN[-1]


def close_all() -> None:
    """Each test's stores closed (journal landed) before its temp folder is removed."""
    while OPEN:
        OPEN.pop().close()


class _Names(MemdirMemoryTool):
    def _path(self, path: str, *, new: bool = False) -> str:
        stored = super()._path(path, new=new)
        if stored != path:
            CLAUDE_NAMES[str(self.store.root) + stored.removeprefix("/memories")] = path
        return stored


class Sync(_Names):
    def __init__(self, base_path: str = "./memory") -> None:
        self.memory = _memory(base_path)
        super().__init__(self.memory)
        self.base_path = Path(base_path)
        self.memory_root = self.base_path / "memories"


class Async(MemdirAsyncMemoryTool):
    def __init__(self, base_path: str = "./memory") -> None:
        self.memory = _memory(base_path)
        super().__init__(self.memory)
        self.sync = _Names(self.memory)
        self.base_path = AsyncPath(base_path)
        self.memory_root = self.base_path / "memories"

    async def _ensure_memory_root(self) -> None:
        """The SDK makes its root on first use; memdir's Memory made it at construction."""


NUMBERED = re.compile(r"^ *[0-9]+\t")


def numbered(reply: str) -> list[str]:
    return [ln for ln in reply.split("\n") if NUMBERED.match(ln)]


def same_reply(ours: str, theirs: str) -> bool:
    """The numbered lines of both replies are the same (the words around them are memdir's);
    a reply of the SDK's that shows no lines says only that it worked, which ours did."""
    return not numbered(theirs) or numbered(ours) == numbered(theirs)


def snapshot(base_path: str) -> dict[str, str]:
    """The test file's own snapshot, of Claude's files only, under the names Claude gave."""
    out: dict[str, str] = {}
    for root, dirs, files in os.walk(base_path):
        dirs[:] = [d for d in dirs if d != ".memdir"]
        for file in files:
            full = os.path.join(root, file)
            if file == "MEMORY.md":
                continue
            with open(full, "r") as f:
                text = f.read()
            claude = CLAUDE_NAMES.get(os.path.realpath(full))
            rel = os.path.relpath(full, base_path)
            if claude is not None:
                rel = "memories" + claude.removeprefix("/memories")
            out[rel] = frontmatter.body(text) if frontmatter.split(text)[1] else text
    return out


sdk.BetaLocalFilesystemMemoryTool = Sync  # type: ignore[misc,assignment]
sdk.BetaAsyncLocalFilesystemMemoryTool = Async  # type: ignore[misc,assignment]
'''

CONFTEST = """import pytest

import memdir_shim  # noqa: F401  (swaps the SDK's classes before the test module imports them)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    memdir_shim.close_all()
    yield


@pytest.fixture(autouse=True)
def _memdir_snapshot(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request.module, "get_directory_snapshot", memdir_shim.snapshot)
"""

INI = """[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""

# Why each remaining failure fails: (pattern of the test id, reason); the first match names it.
REASONS: list[tuple[str, str]] = [
    (
        r"test_read_rejects_symlink_created_after_validation|test_view_rejects_directory_symlink_"
        r"created_after_validation|test_validate_path_returns_resolved_path_not_symlink_target",
        "not applicable: patches the SDK's private `_validate_path`, a step memdir does not have "
        "(each operation walks a descriptor chain that follows no link, store/safefs.py)",
    ),
    (
        r"test_read_rejects_file_replaced_with_symlink_before_open",
        "not applicable: patches os.open expecting the SDK's one open of the whole path; memdir "
        "opens each component relative to its parent's descriptor",
    ),
    (
        r"test_view_directory",
        "documented: the listing names the stored files (file1.md: memory file names, "
        "docs/conventions.md) 3 levels deep with their descriptions",
    ),
    (
        r"test_view_lists_symlinks_only_when_they_stay_inside_memories",
        "documented: the listing shows MEMORY.md (the store's index) and follows no link, not even "
        "one that stays inside",
    ),
    (
        r"test_(str_replace|insert)_preserves_crlf_line_endings",
        "documented: the test writes crlf.txt behind the tool's back, and a .txt file is not "
        "memory, so str_replace and insert refuse it (Memory(BASE) converts an SDK helper's "
        "folder when it opens it; this one was written after)",
    ),
]


class _ReplyTexts(ast.NodeTransformer):
    """The SDK test file's assertions on reply wording made assertions on what the reply shows."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if ast.unparse(node.func) == "pytest.raises":
            node.keywords = [k for k in node.keywords if k.arg != "match"]
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST | None:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = test.left, test.comparators[0]
            if (
                isinstance(test.ops[0], ast.Eq)
                and ast.unparse(left) == "result"
                and isinstance(right, ast.Constant)
                and isinstance(right.value, str)
            ):
                call = ast.parse(f"memdir_shim.same_reply(result, {right.value!r})", mode="eval").body
                return ast.copy_location(ast.Assert(test=call, msg=None), node)
            if (
                isinstance(test.ops[0], ast.In)
                and isinstance(left, ast.Constant)
                and str(left.value).startswith("Here're the files")
            ):
                return None
        return node


def rewrite(source: str) -> str:
    tree = _ReplyTexts().visit(ast.parse(source))
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    at = len(future)  # `from __future__` stays first
    tree.body.insert(at, ast.Import(names=[ast.alias("memdir_shim")]))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def fetch(version: str, into: Path) -> Path:
    """The SDK's test file, taken from its sdist downloaded with pip into `into`."""
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--no-binary", ":all:", f"anthropic=={version}", "-d", str(into)),
        ],
        check=True,
    )
    sdist = next(into.glob(f"anthropic-{version}.tar.gz"))
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"anthropic-{version}/{TEST_FILE}")
        if member is None:
            raise SystemExit(f"{TEST_FILE} is not in {sdist.name}")
        test = into / "test_filesystem.py"
        test.write_text(rewrite(member.read().decode("utf-8")))
    return test


def reason_for(test_id: str, message: str) -> str | None:
    for pattern, reason in REASONS:
        if re.search(pattern, test_id):
            return reason
    return None


def main() -> int:
    import anthropic

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default=anthropic.__version__, help="the SDK version (default: installed)")
    ap.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temp folder)")
    args = ap.parse_args()
    if args.version != anthropic.__version__:
        print(f"note: running the tests of {args.version} on the installed SDK {anthropic.__version__}")
    with tempfile.TemporaryDirectory(prefix="memdir-sdk-tests-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        test = fetch(args.version, work)
        (work / "memdir_shim.py").write_text(SHIM)
        (work / "conftest.py").write_text(CONFTEST)
        (work / "pytest.ini").write_text(INI)
        report = work / "report.xml"
        subprocess.run(
            [
                *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"),
                *("-c", str(work / "pytest.ini"), "--rootdir", str(work), f"--junitxml={report}", str(test)),
            ],
            cwd=work,
            capture_output=True,
            text=True,
        )
        cases = ET.parse(report).getroot().iter("testcase")
        results: dict[str, str | None] = {}  # a failing teardown is a second entry of the test
        for case in cases:
            test_id = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            message = None if bad is None else ((bad.get("message") or "").splitlines() or [""])[0][:200]
            if results.get(test_id) is None:
                results[test_id] = message
    failed = [(t, m) for t, m in results.items() if m is not None]
    print(f"anthropic {args.version} {TEST_FILE}: {len(results) - len(failed)} of {len(results)} pass")
    unexplained = 0
    for test_id, message in failed:
        reason = reason_for(test_id, message or "")
        unexplained += reason is None
        print(f"FAIL {test_id}\n     {reason or 'UNEXPLAINED'}\n     ({message})")
    return 1 if unexplained else 0


if __name__ == "__main__":
    raise SystemExit(main())
