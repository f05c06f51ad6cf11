"""JSON as Python holds it, for data whose shape is a standard's, not memdir's: a JSON Schema, a
provider's wire body, a tool's structured result. Covariant containers, so a schema built of
`dict[str, str]` parts is one; reading a value back means narrowing it (`isinstance`), which
is the point. memdir's own records are TypedDicts beside their makers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:
    JsonValue: TypeAlias = "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
else:
    # At run time a JSON value is any object: the recursive string above would be resolved by
    # `get_type_hints` in the namespace of whichever record holds a JsonObject, which lacks it.
    JsonValue = object
JsonObject: TypeAlias = dict[str, JsonValue]


def record_json(record: Mapping[str, object]) -> JsonObject:
    """A TypedDict record (every field JSON) as the JSON object it is, to nest it in one: a
    type checker holds a TypedDict to be only a `Mapping[str, object]`, never a JsonObject."""
    return cast(JsonObject, record)


def obj(value: object) -> Mapping[str, JsonValue]:
    """`value` if it is a JSON object, else an empty one: a wire body's or an export's optional
    part, read leniently (absent, null and a wrong kind all read as nothing)."""
    return value if isinstance(value, Mapping) else {}


def array(value: object) -> Sequence[JsonValue]:
    """`value` if it is a JSON list, else an empty one."""
    return value if isinstance(value, list) else []


def text(value: object) -> str:
    """`value` if it is a string, else ""."""
    return value if isinstance(value, str) else ""


def count(value: object) -> int:
    """`value` as a whole number (a token count, a size), 0 when absent, null or not a number."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def number(value: object) -> float:
    """`value` as a number (seconds, a rate), 0.0 when absent, null or not a number."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def counts(value: object) -> dict[str, int]:
    """A JSON object of counts (`{"good": 3}`) as ints by name; {} when it is not an object."""
    return {k: count(v) for k, v in obj(value).items()}


def figure(value: object, *keys: str) -> float | None:
    """The number at `keys` (a path through nested objects), None where it is absent, null or not
    a number: a figure a run could not measure, or one an older run's record lacks, shows as none
    rather than 0."""
    for key in keys:
        value = obj(value).get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
