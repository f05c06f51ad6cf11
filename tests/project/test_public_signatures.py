"""No public signature takes or gives a string-keyed dict of `Any` (issue 48, typed boundaries).

Data that crosses rooms has a type: a TypedDict or dataclass where the keys are known, a
pydantic model where it is validated, `memdir.jsontypes.JsonObject` where it is genuinely
arbitrary JSON. The walker reads the source (no import) and reports every `dict[str, Any]`,
`Dict[str, Any]`, `Mapping[str, Any]` and `MutableMapping[str, Any]`, however nested, in

- the parameters and return of a public function or method (a dunder such as `__init__` is
  public: it is how the class is called),
- a field of a public class (any annotated name in its body: dataclass, pydantic model,
  TypedDict, NamedTuple),
- a public module-level name, an alias included.

Public means the module path, the class and the name do not start with `_`. A type alias that
spells one of those forms counts wherever it is used: defined in the same module, or imported
from another module of the two packages; so renaming the type does not hide it.

`python tests/project/test_public_signatures.py` prints the list as `path:line name`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = ("memdir", "memdir_study")
CONTAINERS = {"dict", "Dict", "Mapping", "MutableMapping"}


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@dataclass
class _Module:
    path: Path
    name: str  # dotted
    tree: ast.Module
    aliases: set[str] = field(default_factory=set)  # names bound here to a loose dict type
    imports: dict[str, str] = field(default_factory=dict)  # local name -> "module.name"


class _Walker:
    """Loose-dict detection over a set of modules, aliases followed within and across them."""

    def __init__(self, root: Path, packages: tuple[str, ...]) -> None:
        self.root = root
        self.modules: dict[str, _Module] = {}
        for package in packages:
            for path in sorted((root / package).rglob("*.py")):
                parts = path.relative_to(root).with_suffix("").parts
                name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
                self.modules[name] = _Module(path, name, tree)
        for module in self.modules.values():
            self._read_imports(module)
        self._resolve_aliases()

    def _read_imports(self, module: _Module) -> None:
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.imports[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = module.name.split(".")
                    is_package = module.path.name == "__init__.py"
                    keep = len(here) - node.level + (1 if is_package else 0)
                    base = ".".join(here[:keep] + ([base] if base else []))
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = f"{base}.{alias.name}"

    def _alias_targets(self, module: _Module) -> Iterator[tuple[str, ast.expr]]:
        """Module-level names bound to a type expression: `X = ...` or `X: TypeAlias = ...` (the
        project targets Python 3.11, which has no `type X = ...`)."""
        for node in _flat(module.tree.body):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    yield target.id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                yield from [(node.target.id, node.value)] if _is_type_alias(node.annotation) else []

    def _resolve_aliases(self) -> None:
        changed = True
        while changed:  # to a fixed point: an alias of an alias, or of an imported alias
            changed = False
            for module in self.modules.values():
                for name, value in self._alias_targets(module):
                    if name not in module.aliases and self.loose(module, value):
                        module.aliases.add(name)
                        changed = True

    def _is_alias(self, module: _Module, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether `name` in `module` is a loose-dict alias, here or re-exported from elsewhere."""
        if name in module.aliases:
            return True
        target = module.imports.get(name)
        if target is None or target in seen:
            return False
        owner, _, local = target.rpartition(".")
        found = self.modules.get(owner)
        return found is not None and self._is_alias(found, local, seen | {target})

    def loose(self, module: _Module, node: ast.expr | None) -> bool:
        """Whether a type expression holds a loose dict anywhere inside it."""
        if node is None:
            return False
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                try:
                    parsed = ast.parse(sub.value, mode="eval").body
                except (SyntaxError, ValueError, UnicodeError):  # a string that is not a type
                    continue
                if self.loose(module, parsed):
                    return True
            elif isinstance(sub, ast.Subscript) and _last_name(sub.value) in CONTAINERS:
                args = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else []
                if (
                    len(args) == 2
                    and _last_name(args[0]) == "str"
                    and (_last_name(args[1]) == "Any" or _is_any_string(args[1]))
                ):
                    return True
            elif isinstance(sub, ast.Name) and self._is_alias(module, sub.id):
                return True
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                owner = module.imports.get(sub.value.id, sub.value.id)
                found = self.modules.get(owner)
                if found is not None and self._is_alias(found, sub.attr):
                    return True
        return False

    def found(self) -> list[str]:
        hits: list[str] = []
        for module in self.modules.values():
            if any(part.startswith("_") for part in module.name.split(".")):
                continue
            where = f"{self.root.name}/{module.path.relative_to(self.root).as_posix()}"
            hits += [f"{where}:{line} {name}" for line, name in self._public(module, module.tree.body, "")]
        return hits

    def _public(self, module: _Module, body: list[ast.stmt], owner: str) -> Iterator[tuple[int, str]]:
        for node in _flat(body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("_") and not _dunder(node.name):
                    continue
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else [])]
                params += [a.kwarg] if a.kwarg else []
                if self.loose(module, node.returns) or any(self.loose(module, p.annotation) for p in params):
                    yield node.lineno, owner + node.name
            elif isinstance(node, ast.ClassDef):
                if not node.name.startswith("_"):
                    yield from self._public(module, node.body, f"{owner}{node.name}.")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
                is_alias = _is_type_alias(node.annotation)
                loose = self.loose(module, node.value if is_alias else node.annotation)
                if not name.startswith("_") and loose:
                    yield node.lineno, owner + name
            elif isinstance(node, ast.Assign) and not owner:
                for name in [t.id for t in node.targets if isinstance(t, ast.Name)]:
                    if not name.startswith("_") and name in module.aliases:
                        yield node.lineno, name


def _is_type_alias(annotation: ast.expr) -> bool:
    return _last_name(annotation) == "TypeAlias" or (
        isinstance(annotation, ast.Constant) and annotation.value == "TypeAlias"
    )


def _is_any_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == "Any"


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _flat(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body, with those under `if` / `try` / `with` at the same level."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _flat(node.body)
            yield from _flat(node.orelse)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _flat(part)
        elif isinstance(node, ast.With):
            yield from _flat(node.body)
        else:
            yield node


def loose_public(root: Path = SRC, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Every public signature, field or name holding a loose dict, as `path:line name`."""
    return _Walker(root, packages).found()


@pytest.mark.parametrize("package", PACKAGES)
def test_no_public_signature_holds_a_loose_dict(package: str) -> None:
    hits = [h for h in loose_public() if h.startswith(f"src/{package}/")]
    assert hits == [], f"{len(hits)} public signatures take or give a loose dict:\n" + "\n".join(hits)


PLANTED = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": """
from typing import Any, Dict, Mapping, TypeAlias
from collections.abc import MutableMapping
import typing

Row: TypeAlias = "dict[str, Any]"
Rows = list[Row]
Blob = Mapping[str, typing.Any]
LIMITS: Dict[str, Any] = {}
_HIDDEN: dict[str, Any] = {}
GOOD: dict[str, int] = {}

def read(path: str) -> dict[str, Any]: ...
async def write(rows: Rows) -> None: ...
def stamp(meta: MutableMapping[str, Any] | None = None) -> int: ...
def fine(meta: dict[str, int], *rest: str) -> list[str]: ...
def _private(meta: dict[str, Any]) -> None: ...
def nested() -> None:
    def inner(meta: dict[str, Any]) -> None: ...

class Summary:
    figures: "Mapping[str, Any]"
    name: str
    def __init__(self, **extra: Blob) -> None: ...
    def _own(self) -> dict[str, Any]: ...
    class Inner:
        meta: Row

class _Private:
    meta: dict[str, Any]
    def public(self) -> dict[str, Any]: ...
""",
    "pkg/use.py": """
from __future__ import annotations
from . import shapes
from .shapes import Row as Record

def load() -> Record: ...
def also() -> list[shapes.Blob]: ...
def fine() -> shapes.GOOD: ...
""",
    "pkg/_inside.py": "from typing import Any\ndef hidden() -> dict[str, Any]: ...\n",
}


def test_the_walker_finds_each_planted_loose_dict(tmp_path: Path) -> None:
    for rel, text in PLANTED.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    found = {h.split(":", 1)[1].split(" ", 1)[1] for h in loose_public(tmp_path, ("pkg",))}
    assert found == {
        "Row",
        "Rows",
        "Blob",
        "LIMITS",
        "read",
        "write",
        "stamp",
        "Summary.figures",
        "Summary.__init__",
        "Summary.Inner.meta",
        "load",
        "also",
    }
    files = {h.split(":", 1)[0] for h in loose_public(tmp_path, ("pkg",))}
    assert files == {f"{tmp_path.name}/pkg/shapes.py", f"{tmp_path.name}/pkg/use.py"}


if __name__ == "__main__":
    print("\n".join(loose_public()))
