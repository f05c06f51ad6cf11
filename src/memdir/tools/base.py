"""One definition per tool; every schema and the MCP registration are generated from it.

A tool is a plain typed function `fn(ctx, **params) -> str` registered with :func:`tool`.
The JSON schema comes from its signature and the parameter texts given to the decorator, so
the OpenAI, Anthropic and MCP renderings can never disagree with what the function accepts.
"""

from __future__ import annotations

import inspect
import time
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memdir.errors import ToolError
from memdir.store.paths import MemoryPath
from memdir.store.store import Store

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}


@dataclass
class Meter:
    """What one call (or a run of calls) cost the harness: the units the study meters."""

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

    def as_dict(self) -> dict[str, Any]:
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
    meta: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)  # e.g. {"shell": ShellLimits(...)}

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


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]
    fn: Callable[..., str]
    read_only: bool
    destructive: bool = False

    def input_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": p.json_type, "description": p.description}
            if not p.required and p.default is not None:
                prop["default"] = p.default
            props[p.name] = prop
        return {
            "type": "object",
            "properties": props,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def bind(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check names, presence and types; coerce the forms models commonly send ("5")."""
        if not isinstance(args, dict):
            raise ToolError(f"{self.name} takes a JSON object of arguments: {self._signature()}")
        known = {p.name: p for p in self.params}
        unknown = [k for k in args if k not in known]
        if unknown:
            raise ToolError(f"unknown parameter {unknown[0]!r} for {self.name}; it takes {self._signature()}")
        bound: dict[str, Any] = {}
        for p in self.params:
            if p.name not in args or args[p.name] is None:
                if p.required:
                    raise ToolError(f"{self.name} needs '{p.name}'; it takes {self._signature()}")
                continue
            bound[p.name] = _coerce(self.name, p, args[p.name])
        return bound

    def _signature(self) -> str:
        return ", ".join(p.name if p.required else f"{p.name}?" for p in self.params)


def _coerce(tool_name: str, p: Param, value: Any) -> Any:
    if p.json_type == "integer":
        if isinstance(value, bool):
            pass
        elif isinstance(value, int):
            return value
        elif isinstance(value, float) and value.is_integer():
            return int(value)
        elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
    elif p.json_type == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif p.json_type == "string":
        if isinstance(value, str):
            return value
    elif p.json_type == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise ToolError(f"{tool_name}: '{p.name}' must be a {p.json_type}, got {type(value).__name__}")


REGISTRY: dict[str, ToolSpec] = {}


def tool(
    *, description: str, params: dict[str, str], read_only: bool, destructive: bool = False
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register `fn` as a tool. `params` gives each parameter's text for the model."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        hints = typing.get_type_hints(fn)
        sig = inspect.signature(fn)
        out: list[Param] = []
        for name, prm in list(sig.parameters.items())[1:]:
            out.append(
                Param(
                    name,
                    _json_type(hints[name]),
                    params[name],
                    prm.default is inspect.Parameter.empty,
                    None if prm.default is inspect.Parameter.empty else prm.default,
                )
            )
        missing = set(params) - {p.name for p in out}
        if missing:
            raise TypeError(f"tool {fn.__name__}: texts for unknown parameters {missing}")
        REGISTRY[fn.__name__] = ToolSpec(
            fn.__name__, inspect.cleandoc(description), tuple(out), fn, read_only, destructive
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
    """A tool call's outcome as the model sees it, plus what it cost."""

    text: str
    is_error: bool
    meter: Meter


def run_tool(
    spec: ToolSpec,
    store: Store,
    args: dict[str, Any],
    meta: dict[str, Any],
    config: dict[str, Any] | None = None,
) -> ToolResult:
    """Run one call: bind arguments, open a journal step for writers, meter, catch ToolError."""
    meter = Meter(calls=1)
    ctx = ToolContext(store, meter, meta, dict(config or {}))
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
    except ToolError as exc:
        text, is_error = f"Error: {exc}", True
    except OSError as exc:  # the disk changed under us (a concurrent writer, a full disk)
        reason = exc.strerror or type(exc).__name__
        text, is_error = f"Error: file system error ({reason}); view the path again and retry", True
    meter.seconds = time.perf_counter() - start
    meter.bytes_returned = len(text.encode("utf-8"))
    return ToolResult(text, is_error, meter)
