"""One definition per tool; every schema and the MCP registration are generated from it.

A tool is a plain typed function `fn(ctx, **params) -> str` registered with :func:`tool`.
The JSON schema comes from its signature and the parameter texts given to the decorator, so
the OpenAI, Anthropic and MCP renderings can never disagree with what the function accepts.
Besides its text, a tool may leave a structured result in `ctx.data` (it then declares the
`output_schema` that result follows); the text stays the whole of what the model is shown.
"""

from __future__ import annotations

import inspect
import math
import re
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from memdir.errors import ToolError
from memdir.jsontypes import JsonObject, JsonValue
from memdir.store.landing_intent import StepMeta
from memdir.store.paths import MemoryPath, surrogate_at
from memdir.store.store import Store

if TYPE_CHECKING:
    from memdir.tools.sandbox import ShellLimits

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}
# Integers past this magnitude are refused, not used: 2**53 is the largest that every JSON
# parser holds exactly, ample for a line number or a count, and it keeps every error text short
# (Python refuses to print an int of more than 4,300 digits).
INT_LIMIT = 2**53
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")  # ASCII digits only: int() would also take '٣'
_EXPECTED = {
    "integer": "an integer, e.g. 5",
    "boolean": "true or false",
    "string": "a string",
    "number": "a number, e.g. 2.5",
}


class MeterRecord(TypedDict):
    """A meter as run records keep it: `files_touched` is the count, not the names."""

    calls: int
    bytes_returned: int
    bytes_read: int
    files_touched: int
    writes: int
    seconds: float


class ToolConfig(TypedDict, total=False):
    """The tool settings a harness hands each call; a key left out takes its default."""

    shell: ShellLimits | JsonObject  # a ShellLimits or a dict of its fields (tools/shell.py)
    keep_indexes: bool  # memdir's folder index keeping (tools/folder_index_keeping.py)


ToolArgs = dict[str, JsonValue]  # a call's arguments as a model sends them (JSON)


@dataclass
class Meter:
    """What one call (or a run of calls) cost the harness, in the units a run's cost is
    reported in: calls, writes, bytes returned and read, files touched, seconds."""

    calls: int = 0
    bytes_returned: int = 0
    bytes_read: int = 0
    files_touched: set[str] = field(default_factory=set)
    seconds: float = 0.0
    writes: int = 0  # file-level changes the calls made (a call that wrote nothing adds 0)

    def add(self, other: Meter) -> None:
        self.calls += other.calls
        self.writes += other.writes
        self.bytes_returned += other.bytes_returned
        self.bytes_read += other.bytes_read
        self.files_touched |= other.files_touched
        self.seconds += other.seconds

    def as_dict(self) -> MeterRecord:
        return {
            "calls": self.calls,
            "bytes_returned": self.bytes_returned,
            "bytes_read": self.bytes_read,
            "files_touched": len(self.files_touched),
            "writes": self.writes,
            "seconds": round(self.seconds, 6),
        }


@dataclass
class ToolContext:
    """What a tool sees: the store, the meter of this call, who is calling, and tool settings."""

    store: Store
    meter: Meter
    meta: StepMeta = field(default_factory=dict)
    config: ToolConfig = field(default_factory=lambda: ToolConfig())  # e.g. {"shell": ShellLimits(...)}
    data: JsonObject | None = None  # the call's structured result, following output_schema

    def read_text(self, path: str | MemoryPath) -> str:
        text = self.store.read_text(path)
        self.meter.bytes_read += len(text.encode("utf-8"))
        self.touch(path)
        return text

    def touch(self, path: str | MemoryPath) -> None:
        self.meter.files_touched.add(str(path))


@dataclass(frozen=True)
class Param:
    name: str
    json_type: str
    description: str
    required: bool
    default: Any = None
    # memdir's own addition to the base contract (each tool's text and schema as docs/study.md,
    # "Tool contracts", gives them), e.g. expected_sha256: always accepted, shown in the schemas
    # agent builders get, left out of the base schema (input_schema below).
    extension: bool = False


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str  # a short human-readable name (MCP `title`)
    description: str
    params: tuple[Param, ...]
    fn: Callable[..., str]
    read_only: bool
    destructive: bool = False
    idempotent: bool = False  # repeating a call with the same arguments changes nothing more
    output_schema: JsonObject | None = None  # the JSON schema of `ToolResult.data`
    notes: str = ""  # memdir's conventions taught after the contract (docs/conventions.md)

    def describe(self, extensions: bool = True) -> str:
        """The description a model reads: the base contract, then (with `extensions`) the
        store's writing conventions. `extensions=False` is what memdir's own roles are shown,
        so a role's prompt and its tools teach one way (agents/loop.py, tool_infos)."""
        return f"{self.description}\n{self.notes}" if extensions and self.notes else self.description

    def input_schema(self, extensions: bool = True) -> JsonObject:
        """The arguments' JSON schema. `extensions=False` gives the base schema: the
        one memdir's own roles hand their models (agents/loop.py, tool_infos)."""
        props: JsonObject = {}
        for p in self.params:
            if p.extension and not extensions:
                continue
            prop: JsonObject = {"type": p.json_type, "description": p.description}
            if not p.required and p.default is not None:
                prop["default"] = p.default
            props[p.name] = prop
        return {
            "type": "object",
            "properties": props,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def bind(self, args: ToolArgs) -> ToolArgs:
        """Check names, presence and types; coerce the forms models commonly send ("5")."""
        if not isinstance(args, dict):
            raise ToolError(f"{self.name} takes a JSON object of arguments: {self._signature()}")
        known = {p.name: p for p in self.params}
        unknown = [k for k in args if k not in known]
        if unknown:
            name = ascii(unknown[0])
            name = name if len(name) <= 60 else name[:57] + "..."
            raise ToolError(f"unknown parameter {name} for {self.name}; it takes {self._signature()}")
        bound: ToolArgs = {}
        for p in self.params:
            if p.name not in args or args[p.name] is None:
                if p.required:
                    raise ToolError(f"{self.name} needs '{p.name}'; it takes {self._signature()}")
                continue
            bound[p.name] = _coerce(self.name, p, args[p.name])
        return bound

    def _signature(self) -> str:
        # The base parameters only: an error text must not teach an extension to a model
        # whose schema leaves it out.
        shown = [p for p in self.params if not p.extension]
        return ", ".join(p.name if p.required else f"{p.name}?" for p in shown)


def _coerce(tool_name: str, p: Param, value: Any) -> Any:
    """The argument as the function takes it, or a ToolError naming the parameter and what it
    takes. Total: any value at all ends in one or the other."""
    if p.json_type == "integer":
        n: int | None = None
        if isinstance(value, bool):
            pass
        elif isinstance(value, int):
            n = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            n = int(value)
        elif isinstance(value, str) and _INT_TEXT.fullmatch(value):
            digits = value.strip().lstrip("+-")
            n = int(value) if len(digits) <= 16 else INT_LIMIT + 1
        if n is not None:
            if -INT_LIMIT <= n <= INT_LIMIT:
                return n
            raise ToolError(
                f"{tool_name}: '{p.name}' is out of range; use an integer from -{INT_LIMIT} to {INT_LIMIT}"
            )
    elif p.json_type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
    elif p.json_type == "string":
        if isinstance(value, str):
            at = surrogate_at(value)
            if at is not None:
                # Refused, not replaced: a replacement character would change what the model
                # wrote without telling it, and text written to a file must be what was sent.
                raise ToolError(
                    f"{tool_name}: '{p.name}' has a lone UTF-16 surrogate (U+{ord(value[at]):04X}) at "
                    f"character {at}, which is not Unicode text; send it again as valid Unicode (a "
                    "character such as an emoji needs both halves of its surrogate pair)"
                )
            return value
    elif p.json_type == "number" and _finite_number(value):
        if abs(value) <= INT_LIMIT:
            return value
        raise ToolError(
            f"{tool_name}: '{p.name}' is out of range; use a number from -{INT_LIMIT} to {INT_LIMIT}"
        )
    raise ToolError(f"{tool_name}: '{p.name}' must be {_EXPECTED[p.json_type]}; got {_describe(value)}")


def _finite_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _describe(value: Any) -> str:
    """A short, printable description of any argument value, for an error text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "an integer" if abs(value) > INT_LIMIT else f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = ascii(value[:40])  # ascii(): a lone surrogate or a control character is escaped
        return f"the string {shown}{'…' if len(value) > 40 else ''}"
    if isinstance(value, list | tuple):
        return f"an array of {len(value)} item(s)"
    if isinstance(value, dict):
        return f"an object with {len(value)} key(s)"
    return f"a {type(value).__name__}"


REGISTRY: dict[str, ToolSpec] = {}


def tool(
    *,
    title: str,
    description: str,
    params: dict[str, str],
    read_only: bool,
    destructive: bool = False,
    idempotent: bool | None = None,
    extensions: tuple[str, ...] = (),
    output_schema: JsonObject | None = None,
    notes: tuple[str, ...] = (),
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register `fn` as a tool. `params` gives each parameter's text for the model; the names
    in `extensions` are memdir's additions to the base contract (each must be optional).
    `idempotent` defaults to `read_only`; a writer that claims it must earn it (a test repeats
    its calls). A tool with an `output_schema` sets `ctx.data` on every successful call. `notes`
    teach the store's conventions after the contract, to agent builders' models only."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        hints = typing.get_type_hints(fn)
        sig = inspect.signature(fn)
        out: list[Param] = []
        for name, prm in list(sig.parameters.items())[1:]:
            required = prm.default is inspect.Parameter.empty
            if name in extensions and required:
                raise TypeError(f"tool {fn.__name__}: extension parameter {name!r} needs a default")
            out.append(
                Param(
                    name,
                    _json_type(hints[name]),
                    params[name],
                    required,
                    None if required else prm.default,
                    name in extensions,
                )
            )
        missing = (set(params) | set(extensions)) - {p.name for p in out}
        if missing:
            raise TypeError(f"tool {fn.__name__}: texts for unknown parameters {missing}")
        REGISTRY[fn.__name__] = ToolSpec(
            fn.__name__,
            title,
            inspect.cleandoc(description),
            tuple(out),
            fn,
            read_only,
            destructive,
            read_only if idempotent is None else idempotent,
            output_schema,
            "\n".join(inspect.cleandoc(n) for n in notes),
        )
        return fn

    return register


def _json_type(hint: Any) -> str:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = args[0]
    return _JSON_TYPES[hint]


@dataclass
class ToolResult:
    """A tool call's outcome as the model sees it, plus what it cost, plus (for a tool with an
    output schema, on success) the same outcome as structured data, e.g. a file's sha256."""

    text: str
    is_error: bool
    meter: Meter
    data: JsonObject | None = None


def run_tool(
    spec: ToolSpec,
    store: Store,
    args: ToolArgs,
    meta: StepMeta,
    config: ToolConfig | None = None,
) -> ToolResult:
    """Run one call: bind arguments, open a journal step for writers, meter, catch ToolError."""
    meter = Meter(calls=1)
    ctx = ToolContext(store, meter, meta, ToolConfig(**(config or {})))
    start = time.perf_counter()
    try:
        bound = spec.bind(args)
        if spec.read_only:
            text = spec.fn(ctx, **bound)
        else:
            with store.step(spec.name, **meta) as step:
                try:
                    text = spec.fn(ctx, **bound)
                finally:
                    meter.writes = len(step.changes)
        is_error = False
        data = ctx.data
    except ToolError as exc:
        text, is_error, data = f"Error: {exc}", True, None
    except OSError as exc:  # the disk changed under us (a concurrent writer, a full disk)
        reason = exc.strerror or type(exc).__name__
        text, is_error = f"Error: file system error ({reason}); view the path again and retry", True
        data = None
    meter.seconds = time.perf_counter() - start
    text = printable_text(text)
    meter.bytes_returned = len(text.encode("utf-8"))
    return ToolResult(text, is_error, meter, None if data is None else printable_data(data))


def printable_data(value: Any) -> Any:
    """`value` with every string in it made printable (`printable_text`), so structured data
    can always travel as JSON, as the text can. An ASCII string or a number is kept without a
    call (a listing's data holds thousands: the calls were a fifth of a root view)."""
    if isinstance(value, str):
        return printable_text(value)
    if isinstance(value, dict):
        return {
            (k if type(k) is str and k.isascii() else printable_text(str(k))): (
                v if type(v) in _AS_IS or (type(v) is str and v.isascii()) else printable_data(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [
            v if type(v) in _AS_IS or (type(v) is str and v.isascii()) else printable_data(v) for v in value
        ]
    return value


_AS_IS = frozenset({int, float, bool, type(None)})  # what printable_data gives back as it is


def printable_text(text: str) -> str:
    """`text` as valid Unicode: a lone surrogate (a file name that is not UTF-8 reached the text
    through some listing) shown as its escape, so no reply can fail to encode on its way out."""
    if surrogate_at(text) is None:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
