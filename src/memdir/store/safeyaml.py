"""YAML without aliases and without deep nesting: the one way memdir loads YAML.

An alias (`*a`) makes a loaded value share the anchored one (`&a`), so loading stays cheap but
every walk over the result (indexing the metadata, `str()`, `json.dumps`) expands it: nine
levels of nine aliases each (the "billion laughs" shape) is under 400 bytes of text and 9^9
values to walk, and an alias to its own anchor never ends. Nothing memdir reads needs them
(frontmatter is name, description and a metadata mapping; the tenants file is a list of
entries), so a document holding an alias is refused before anything is constructed. So is
nesting past MAX_DEPTH, which the pure-Python parser (used when PyYAML lacks libyaml) would
otherwise meet as a RecursionError. Construction errors that PyYAML does not wrap (an
unhashable key, an impossible `!!timestamp`) come out as `yaml.YAMLError` too, so a caller
needs to catch only that.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 32


class RefusedYAML(yaml.YAMLError):
    """Well-formed YAML that memdir will not load (an alias, or nesting past MAX_DEPTH)."""


ALIAS_REFUSED = (
    "uses a YAML alias (*name) to repeat an anchored (&name) value; aliases are refused because "
    "a few hundred bytes of them expand to billions of values: write each value out in full"
)
DEPTH_REFUSED = f"nests deeper than {MAX_DEPTH} levels; flatten the structure"


def _check(root: yaml.Node) -> None:
    """Refuse a node graph that is not a tree (the composer shares a node only for an alias),
    or deeper than MAX_DEPTH. Iterative, and each node is visited once."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise RefusedYAML(ALIAS_REFUSED)
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise RefusedYAML(DEPTH_REFUSED)
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))


def load(text: str, loader: type[yaml.SafeLoader] = yaml.SafeLoader) -> Any:
    """The single document in `text`, built by `loader` (a SafeLoader or a subclass).

    Raises `yaml.YAMLError` (a `RefusedYAML` for an alias or deep nesting) for anything that
    does not load; never expands an alias.
    """
    ld = loader(text)
    try:
        try:
            node = ld.get_single_node()
        except RecursionError:
            raise RefusedYAML(DEPTH_REFUSED) from None
        if node is None:
            return None
        _check(node)
        try:
            return ld.construct_document(node)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"a value could not be built ({type(exc).__name__}: {exc})", node.start_mark
            ) from None
    finally:
        ld.dispose()
