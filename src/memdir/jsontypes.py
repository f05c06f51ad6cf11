"""JSON as Python holds it, for data whose shape is a standard's, not memdir's: a JSON Schema, a
provider's wire body, a tool's structured result. Covariant containers, so a schema built of
`dict[str, str]` parts is one; reading a value back means narrowing it (`isinstance`), which
is the point. memdir's own records are TypedDicts beside their makers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, cast

JsonValue: TypeAlias = "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
JsonObject: TypeAlias = dict[str, JsonValue]


def record_json(record: Mapping[str, object]) -> JsonObject:
    """A TypedDict record (every field JSON) as the JSON object it is, to nest it in one: a
    type checker holds a TypedDict to be only a `Mapping[str, object]`, never a JsonObject."""
    return cast(JsonObject, record)
