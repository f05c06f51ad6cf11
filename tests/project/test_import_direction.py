"""The architecture follows the data; these tests keep imports pointing one way (the diagram at
the top of ARCHITECTURE.md) and the module graph free of cycles.

An import is any way one module asks for another: an `import` or `from` statement anywhere in
the file (at the top, inside a function, under TYPE_CHECKING), or a module named by a string
and handed to `importlib.import_module` or `__import__`. src/ imports none of its own modules
by string, so each dependency is visible to these checks and to the type checker.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = ("memdir", "memdir_study")  # the product, and the study on top of it

# layer -> the layers it may import (besides itself). Top-level modules (errors, tokens, stream,
# conventions, cache) are shared leaves anyone may import; `memdir/__init__.py` only re-exports.
PRODUCT = {
    "store",
    "search",
    "tools",
    "models",
    "analytics",
    "agents",
    "api",
    "mcp",
    "integrations",
    "chatlogs",
    "sync",
    "serving",
}
P = ("store", "search", "tools", "models", "agents", "analytics")
ALLOWED: dict[str, set[str]] = {
    "store": set(),
    "search": {"store"},  # the indexes derived from the files and the rankings over them
    "tools": {"store", "search", "analytics"},
    "models": set(),
    "chatlogs": set(),  # chat logs as users have them, read into turns: only the leaves
    "analytics": {"store"},
    "agents": {"store", "search", "tools", "models", "analytics"},
    "integrations": {"store", "tools"},
    "mcp": {"store", "tools"},
    "sync": {"store", "tools", "agents"},  # a store's files shared through a git remote, merged by fact
    "serving": {"store", "tools", "mcp", "sync"},  # the tenants' MCP server on Ray Serve
    "api": {"store", "search", "tools", "models", "agents", "integrations", "mcp", "chatlogs", "sync"},
    "plugins": set(),  # the hooks a plugin implements (memdir/plugins.py); cli and ui load them
    # the outer layers: anything of the product (only cli imports ui), nothing of the study
    "cli": {*PRODUCT, "ui", "plugins"},
    "ui": {*PRODUCT, "plugins"},
    # the study (memdir_study, docs/study.md) sits on the product; its rooms import downward
    "study.runfolder": {"store"},
    "study.roles": {"store", "tools", "models", "agents"},  # the roles only the study plays
    "study.cluster": {"models"},
    "study.bench": {"store", "chatlogs"},
    "study.variants": {*P, "study.bench", "study.roles"},
    "study.skills": {*P, "study.bench", "study.variants", "study.runfolder", "study.cluster", "study.roles"},
    "study.eval": {
        *P,
        *("study.bench", "study.variants", "study.skills", "study.runfolder", "study.cluster"),
        "study.roles",
    },
    # the study's outer layers: its commands (on the product's shared options) and run pages
    "study.cli": {
        *P,
        *("chatlogs", "cli", "study.bench", "study.variants", "study.skills", "study.eval"),
        *("study.runfolder", "study.cluster", "study.roles"),
    },
    "study.ui": {"store", "ui", "study.bench", "study.eval", "study.skills", "study.runfolder"},
    "study.plugin": {"plugins", "study.cli", "study.ui"},  # what the entry point loads
}
LEAVES = {
    "errors",
    "tokens",
    "jsontypes",  # JSON as Python holds it, for shapes a standard defines (a JSON Schema, a wire body)
    "stream",
    "conventions",
    "cache",
    "words",
    "fact_quality",
    "fact_dates",  # the days a turn's words name (the time rule of a written fact)
    "fact_truth",  # who, what and when of a written fact: every curator and the benchmark
    "sign_test",  # the sign test both studies report with (its docstring says why a leaf)
    "study",  # memdir_study/__init__.py, a docstring only; its rooms are checked as study.<room>
    "__init__",
    "__main__",
}
STRING_IMPORTERS = {"import_module", "__import__"}


def modules(src: Path, package: str) -> dict[str, Path]:
    """{dotted name: file} of every module of `package` under `src` (a package is its __init__)."""
    found: dict[str, Path] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _known(name: str, known: set[str]) -> str | None:
    """The module `name` denotes: itself, or the nearest package or module holding it."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path, name: str, known: set[str]) -> tuple[set[str], set[str]]:
    """(modules `path` imports by statement, modules it imports by string), as names in `known`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    stated: set[str] = set()
    by_string = False
    strings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            stated.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            stated.add(base)
            stated.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
        elif isinstance(node, ast.Call):
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            by_string = by_string or callee in STRING_IMPORTERS
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
    # A string import may name its module through a variable (a tuple of names looped over), so
    # every submodule name written in a file that imports by string counts as imported (the bare
    # package name is too common a word, and every module imports its package anyway).
    named = {s for s in strings if s in known and "." in s} if by_string else set()
    resolved = {_known(n, known) for n in stated}
    return {m for m in resolved if m is not None}, named


def graph(src: Path, *packages: str) -> dict[str, set[str]]:
    """{module: the modules it imports}. Importing `a.b.c` imports `a` and `a.b` too; an edge up
    to the importer's own packages is left out (they run before it, and a package that re-exports
    its submodules imports them by design)."""
    found = {name: path for package in packages for name, path in modules(src, package).items()}
    known = set(found)
    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        stated, named = imports(path, name, known)
        targets: set[str] = set()
        for target in stated | named:
            parts = target.split(".")
            targets.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
        own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 2)}
        edges[name] = {t for t in targets if t in known and t not in own}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import one another, directly or around a loop (Tarjan's
    strongly connected components with more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def layer(name: str) -> str:
    """A module's room: `<room>` of `memdir.<room>`, `study.<room>` of `memdir_study.<room>`."""
    parts = name.split(".")
    if parts[0] == "memdir_study":
        return f"study.{parts[1]}" if len(parts) > 1 else "study"
    return parts[1] if len(parts) > 1 else "__init__"


def package_of(room: str) -> str:
    """The dotted name of a room: `memdir.<room>` or `memdir_study.<room>`."""
    return f"memdir_study.{room[6:]}" if room.startswith("study.") else f"memdir.{room}"


def layer_problems(src: Path) -> list[str]:
    problems: list[str] = []
    for name, targets in sorted(graph(src, *PACKAGES).items()):
        own = layer(name)
        if own in LEAVES:
            continue
        assert own in ALLOWED, f"new top-level module {own!r}: add it to ALLOWED with its place"
        for target in sorted({layer(t) for t in targets} - {own} - LEAVES - ALLOWED[own]):
            problems.append(f"{name} imports {package_of(target)}")
    return problems


def string_imports(src: Path) -> list[str]:
    found = {name: path for package in PACKAGES for name, path in modules(src, package).items()}
    return [
        f"{name} imports {m} by string"
        for name, path in sorted(found.items())
        for m in sorted(imports(path, name, set(found))[1])
    ]


def test_layers_import_only_downward() -> None:
    problems = layer_problems(SRC)
    assert not problems, "imports against the architecture:\n" + "\n".join(problems)


def test_the_product_never_names_the_study() -> None:
    """The product (memdir, cli and ui included) works with the study deleted: what both need
    lives in the product, and the study comes in only through the plugin seam
    (memdir/plugins.py). No module of memdir imports the study, and no file of it names the
    study's package at all (an import, a string handed to a loader, a docstring pointing there)."""
    problems = [
        f"{name} imports {target}"
        for name, targets in sorted(graph(SRC, *PACKAGES).items())
        if not layer(name).startswith("study")
        for target in sorted(targets)
        if layer(target).startswith("study")
    ]
    problems += [
        f"{path.relative_to(SRC)}:{number} names memdir_study"
        for path in sorted((SRC / "memdir").rglob("*"))
        if path.is_file() and path.suffix in {".py", ".md", ".html", ".json", ".yaml", ".js", ".css"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "memdir_study" in line
    ]
    assert not problems, "the product reaches into the study:\n" + "\n".join(problems)


def test_only_the_outer_layers_import_cli_ui_mcp_or_api() -> None:
    """cli is the top, mcp and api serve a store to the outside: only cli (and the package's
    lazy re-exports) may reach api, nothing below api reaches mcp or cli (serving, the MCP
    server on Ray, sits on mcp), only cli reaches ui,
    and of the study only its commands reach cli and only its run pages reach ui."""
    for name, targets in graph(SRC, *PACKAGES).items():
        own = layer(name)
        reached = {layer(t) for t in targets} - {own}
        if own not in ("cli", "__main__", "__init__", "study.cli"):
            assert "cli" not in reached, name
        if own not in ("cli", "__main__", "__init__", "study.ui"):
            assert "ui" not in reached, name
        if own not in ("cli", "__main__", "__init__", "ui"):
            assert "api" not in reached, name
        if own not in ("cli", "__main__", "api", "ui", "serving"):
            assert "mcp" not in reached, name
        if own != "study.plugin":  # loaded by its entry point only
            assert not {"study.plugin", "study.cli", "study.ui"} & reached - {own}, name


def test_no_module_is_imported_by_string() -> None:
    assert string_imports(SRC) == []


def test_the_module_graph_has_no_cycles() -> None:
    assert cycles(graph(SRC, *PACKAGES)) == []


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_planted_cycles_are_caught(tmp_path: Path) -> None:
    """A synthetic tree with a lazy cycle and one closed by a string import under TYPE_CHECKING."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import f\n",
            "pkg/b.py": "def f():\n    from pkg import a\n    return a\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import X\n",
            "pkg/d.py": "import importlib\nX = 1\nfor n in ('pkg.c',):\n    importlib.import_module(n)\n",
            "pkg/e.py": "import pkg.a\n",
        },
    )
    assert cycles(graph(tmp_path, "pkg")) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
    _write(tmp_path, {"pkg/b.py": "def f():\n    return 1\n", "pkg/d.py": "X = 1\n"})
    assert cycles(graph(tmp_path, "pkg")) == []


@pytest.mark.slow
def test_the_removed_cycles_planted_back_in_a_copy_are_caught(tmp_path: Path) -> None:
    """The two cycles this layout removed (the store naming its observers, the adapter importing
    the API), put back into a copy of memdir, and a store module importing a guard by string."""
    shutil.copytree(SRC / "memdir", tmp_path / "memdir", ignore=shutil.ignore_patterns("__pycache__"))
    assert cycles(graph(tmp_path, "memdir")) == [] and layer_problems(tmp_path) == []
    with (tmp_path / "memdir/store/store.py").open("a") as fh:
        fh.write("\n\ndef _views():\n    from memdir.search.index import observer\n\n    return [observer]\n")
    with (tmp_path / "memdir/integrations/anthropic_memory.py").open("a") as fh:
        fh.write("\nif TYPE_CHECKING:\n    from memdir.api import Memory\n")
    with (tmp_path / "memdir/store/spec.py").open("a") as fh:
        fh.write("\nimport importlib\n\nGUARDS = importlib.import_module('memdir.tools.guards')\n")
    groups = cycles(graph(tmp_path, "memdir"))
    assert any({"memdir.store.store", "memdir.search.index"} <= set(g) for g in groups), groups
    assert any({"memdir.api", "memdir.integrations.anthropic_memory"} <= set(g) for g in groups), groups
    problems = layer_problems(tmp_path)
    assert "memdir.integrations.anthropic_memory imports memdir.api" in problems
    assert "memdir.store.spec imports memdir.tools" in problems
    assert string_imports(tmp_path) == ["memdir.store.spec imports memdir.tools.guards by string"]
