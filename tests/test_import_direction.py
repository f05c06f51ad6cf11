"""The architecture follows the data; this test keeps imports pointing the right way."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memdir"

# layer -> the memdir layers it may import (besides itself). Top-level modules (errors, tokens,
# stream, locators) are shared leaves anyone may import.
ALLOWED: dict[str, set[str]] = {
    "store": set(),
    "tools": {"store"},
    "models": set(),
    "analytics": {"store"},
    "bench": {"store"},
    "agents": {"store", "tools", "models", "analytics"},
    "variants": {"store", "tools", "models", "agents", "analytics", "bench"},
    "skills": {"store", "tools", "models", "agents", "analytics", "bench", "variants"},
    "eval": {"store", "tools", "models", "agents", "analytics", "bench", "variants", "skills"},
    "integrations": {"store", "tools"},
    "mcp": {"store", "tools"},
    "cli": {"*"},
}
LEAVES = {"errors", "tokens", "stream", "locators", "__init__", "__main__", "api"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for n in names:
            parts = n.split(".")
            if parts[0] == "memdir" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_layers_import_only_downward() -> None:
    problems: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        layer = rel.parts[0].removesuffix(".py")
        if layer in LEAVES:
            continue
        assert layer in ALLOWED, f"new top-level module {layer!r}: add it to ALLOWED with its place"
        if "*" in ALLOWED[layer]:
            continue
        for target in _imports(path) - {layer} - LEAVES:
            if target not in ALLOWED[layer]:
                problems.append(f"{rel} imports memdir.{target}")
    assert not problems, "imports against the architecture:\n" + "\n".join(problems)


def test_nothing_imports_cli_or_mcp() -> None:
    for path in SRC.rglob("*.py"):
        layer = path.relative_to(SRC).parts[0]
        if layer in ("cli", "mcp", "__main__.py"):
            continue
        assert not ({"cli", "mcp"} & _imports(path)) or layer == "api.py", path
