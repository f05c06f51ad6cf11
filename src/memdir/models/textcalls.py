"""Tool calls that a model wrote as text in its reply instead of as structured `tool_calls`.

Small local models (Qwen2.5 1.5B behind llama.cpp's OpenAI-compatible server, Ollama, vLLM
without a tool parser) often answer a tool request with the call in the message *content*:
Hermes-style `<tool_call>` tags, a fenced ```json block, or a bare JSON object, now and then as a
Python dict, with a trailing comma or raw newlines inside a string. The server then reports no
tool call at all and the loop would take the call for the final answer. :func:`parse_text_calls`
recovers those calls and the prose around them; :func:`render_text_call` writes one call back in
the canonical tag form, for servers driven in the "text" tool protocol.

Only an object naming one of the offered tools counts as a call, so a final answer object or
JSON quoted in prose stays text. Pure, and bounded: nothing here raises, and any reply costs a
capped amount of work (structural characters scanned, candidates decoded, characters decoded).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from memdir.models.base import ToolCall

__all__ = ["TextCalls", "parse_text_calls", "render_text_call"]

# Bounds on the work one reply may cost, whatever its size or shape.
_MAX_TOKENS = 40_000  # structural characters ({ } [ ] and quotes) the scanner visits
_MAX_CANDIDATES = 64  # candidate values handed to the decoders
_MAX_CANDIDATE = 256 * 1024  # characters in one candidate
_MAX_LITERAL = 64 * 1024  # the largest text handed to the Python parser
_MAX_DECODE = 1_000_000  # characters handed to the decoders in all
_MAX_BLOCKS = 256  # tags and fences looked at
_MAX_HINTS = 4096  # places where a tag or fence might open
_MAX_REPAIRS = 4  # unclosed values tried with their missing closers appended
_MAX_DEPTH = 100  # nesting of a decoded value

_NAME_KEYS = ("name", "tool_name", "tool", "function_name", "function", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params", "action_input", "tool_input", "kwargs")
_WRAPPER_KEYS = ("tool_calls", "tool_call", "function_call", "calls", "actions", "tool_uses")
_NOT_ARGS = frozenset({"id", "type", "call_id", "index", "thought", "thoughts", "reasoning"})
_EXPLICIT_TAGS = frozenset({"tool_call", "tool_calls", "function_call", "function_calls", "functioncall"})
_CALL_FENCES = frozenset({"", "python", "py", "tool_code", "tool_call", "tool_calls"})

_TOKEN = re.compile(r"[{}\[\]\"']")
_DQ = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
_SQ = re.compile(r"'(?:[^'\\\n]++|\\.)*+'")
_CLOSER = {"{": "}", "[": "]"}
_OPENER_HINT = re.compile(r"[<`~]")
_OPENER = re.compile(
    r"<(?i:(?P<tag>tool_calls?|function_calls?|functioncall|tools)\s*>|function=(?P<fname>[^>\s]{1,128})>)"
    r"|(?P<fence>`{3,}|~{3,})(?P<lang>[\w.+-]*)"
)
_TAG_OPEN = re.compile(r"<(?:tool_calls?|function_calls?|functioncall)\s*>", re.I)
_ORPHAN_CLOSE = re.compile(r"</(?:tool_calls?|function_calls?|functioncall)\s*>", re.I)
_BLOCK_CLOSE = re.compile(r"</(?:tool_calls?|function_calls?|functioncall|tools|function)\s*>|```", re.I)
_MARKER = re.compile(r"(?:\[TOOL_CALLS\]|<\|python_tag\|>|<\|tool_calls?\|>)\s*$")
_TRAILING_JUNK = re.compile(r"[ \t\"'}\]]*(?=\n|$)")
_NAME_RE = re.compile(
    r"""[{,]\s*["']?(?:name|tool_name|tool|function_name|function|action)["']?\s*:\s*["']([^"'\n]{1,128})["']""",
    re.I,
)
_ARGS_RE = re.compile(
    r"""[{,\s]\s*["']?(?:arguments|parameters|args|input|params|action_input|tool_input)["']?\s*:\s*["']?\s*(?=\{)""",
    re.I,
)
_STARTS_AS_CALL = re.compile(
    r"""[{\[]\s*(?:\{\s*)?["']?(?:name|tool_name|tool|function_name|function|action|type|id|tool_calls)\b""",
    re.I,
)
_CALL_SUFFIX = re.compile(r"\s*\(.*\)\s*$", re.S)
_SEGMENT = re.compile(r"[.:/]")
_NORMALIZE = re.compile(
    r'"(?:[^"\\]|\\.)*+"|\'(?:[^\'\\]|\\.)*+\'|,(?=\s*[}\]])|\b(?:true|false|null|True|False|None)\b', re.S
)
_CONTROL = re.compile(r"[\x00-\x1f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_TO_PY = {"true": "True", "false": "False", "null": "None"}
_TO_JSON = {"True": "true", "False": "false", "None": "null"}

# One recovered call before it gets its id: name, arguments, parse error.
_Call = tuple[str, dict[str, Any], str | None]


@dataclass
class TextCalls:
    calls: list[ToolCall]
    text: str  # the reply with the call blocks removed, stripped


def parse_text_calls(text: str, tool_names: Collection[str], *, id_prefix: str = "call") -> TextCalls:
    """The tool calls written as text in `text`, in order, and the prose left around them.

    A call is an object naming one of `tool_names` (matched leniently when unambiguous), in a
    `<tool_call>` tag, a fenced block or bare in the text. A call whose arguments cannot be
    decoded comes back with `parse_error` set and empty arguments. Never raises.
    """
    try:
        return _parse(text, tool_names, id_prefix)
    except Exception:  # a parser bug must not end a run; the reply then simply holds no calls
        return TextCalls([], text.strip() if isinstance(text, str) else "")


def render_text_call(call: ToolCall) -> str:
    """`call` in the canonical Hermes / Qwen text form, as sent back to a "text" protocol server."""
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


# --- the parse --------------------------------------------------------------------------------


@dataclass
class _Budget:
    tokens: int = _MAX_TOKENS
    candidates: int = _MAX_CANDIDATES
    decode: int = _MAX_DECODE


class _Names:
    """The offered tool names, and the lenient match of a name as a model wrote it."""

    def __init__(self, names: Collection[str]) -> None:
        self.exact = {n for n in names if isinstance(n, str) and n}
        by_key: dict[str, set[str]] = {}
        for n in self.exact:
            by_key.setdefault(_key(n), set()).add(n)
        self.by_key = {k: next(iter(v)) for k, v in by_key.items() if len(v) == 1}
        self.keys = sorted(by_key, key=len, reverse=True)
        alternatives = ("".join("[-_]" if c in "-_" else re.escape(c) for c in k) for k in self.keys)
        self.mention = re.compile("|".join(alternatives), re.I) if self.keys else None

    def resolve(self, raw: object) -> str | None:
        if not isinstance(raw, str) or len(raw) > 200:
            return None
        if raw in self.exact:
            return raw
        s = _CALL_SUFFIX.sub("", raw.strip().strip("`'\" ").strip())  # "view()", "view(path=...)"
        for cand in (s, _SEGMENT.split(s)[-1]):  # "functions.view", "default_api:view"
            if cand in self.exact:
                return cand
            hit = self.by_key.get(_key(cand))
            if hit is not None:
                return hit
        return None


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


@dataclass
class _Ctx:
    text: str
    names: _Names
    low: str | None  # `text` lowercased with "-" as "_", when that keeps every offset
    budget: _Budget = field(default_factory=_Budget)

    searched: dict[re.Pattern[str], tuple[int, re.Match[str] | None]] = field(default_factory=dict)

    def search(self, pattern: re.Pattern[str], at: int) -> re.Match[str] | None:
        """pattern.search(text, at), remembering the last answer: a closer that never comes is
        looked for once, not once per block."""
        last = self.searched.get(pattern)
        if last is not None and last[0] <= at and (last[1] is None or last[1].start() >= at):
            return last[1]
        m = pattern.search(self.text, at)
        self.searched[pattern] = (at, m)
        return m

    def mentioned(self, start: int, end: int) -> bool:
        """Whether text[start:end] holds an offered tool's name (a call must)."""
        if self.low is not None:
            return any(self.low.find(k, start, end) >= 0 for k in self.names.keys)
        return self.names.mention is not None and self.names.mention.search(self.text, start, end) is not None


@dataclass
class _Found:
    start: int
    end: int
    calls: list[_Call]


@dataclass
class _Block:
    start: int
    end: int
    inner_lo: int
    inner_hi: int
    kind: str  # "tag", "function" or "fence"
    label: str  # the tag's name, the function's name or the fence's language


def _parse(text: str, tool_names: Collection[str], id_prefix: str) -> TextCalls:
    if not isinstance(text, str):
        return TextCalls([], "")
    names = _Names(tool_names)
    if names.mention is None or not text:
        return TextCalls([], text.strip())
    low = text.lower().replace("-", "_")
    ctx = _Ctx(text, names, low if len(low) == len(text) else None)
    if "<" not in text and not ctx.mentioned(0, len(text)):
        return TextCalls([], text.strip())
    bare = _find(ctx, 0, len(text))
    starts = [f.start for f in bare]
    consumed: set[int] = set()
    located: list[tuple[int, list[_Call]]] = []
    removals: list[tuple[int, int]] = []
    for block in _blocks(ctx, bare, starts):
        lo = bisect.bisect_left(starts, block.inner_lo)
        hi = bisect.bisect_left(starts, block.inner_hi)
        calls: list[_Call] = []
        if hi > lo:
            consumed.update(range(lo, hi))
            for f in bare[lo:hi]:
                calls += f.calls
        else:
            calls = _block_calls(ctx, block)
        if calls:
            located.append((block.start, calls))
            removals.append((block.start, block.end))
    for i, f in enumerate(bare):
        if i not in consumed:
            located.append((f.start, f.calls))
            removals.append(_widen(text, f.start, f.end))
    located.sort(key=lambda item: item[0])
    flat = [c for _, calls in located for c in calls]
    out = [ToolCall(f"{id_prefix}_{i}", name, args, error) for i, (name, args, error) in enumerate(flat)]
    rest = _cut(text, removals)
    if out:
        rest = _ORPHAN_CLOSE.sub("", rest).strip()
    return TextCalls(out, rest)


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A bare call's span with the inline backticks, marker token and stray closers around it."""
    if start > 0 and end < len(text) and text[start - 1] == "`" and text[end] == "`":
        start, end = start - 1, end + 1
    m = _MARKER.search(text, max(0, start - 40), start)
    if m is not None:
        start = m.start()
    junk = _TRAILING_JUNK.match(text, end)
    if junk is not None:
        end = junk.end()
    return start, end


def _cut(text: str, removals: list[tuple[int, int]]) -> str:
    """`text` without the removed spans; each seam keeps one separator of the kind it had."""
    pieces: list[str] = []
    pos = 0
    for start, end in sorted(removals):
        if start >= pos:
            pieces.append(text[pos:start])
            pos = end
        else:
            pos = max(pos, end)
    pieces.append(text[pos:])
    out = pieces[0].rstrip()
    gap = pieces[0][len(out) :]
    for piece in pieces[1:]:
        body = piece.strip()
        gap += piece[: len(piece) - len(piece.lstrip())]
        if body:
            if out:
                out += "\n\n" if "\n\n" in gap else "\n" if "\n" in gap else " "
            out += body
            gap = piece[len(piece.rstrip()) :]
    return out.strip()


# --- candidates: balanced values found by a string-aware scanner ------------------------------


@dataclass
class _Scan:
    pairs: list[tuple[int, int]]  # [open, close + 1), sorted by open
    unclosed: list[tuple[int, str]]  # openers never closed, outermost first: (position, closer)
    open_string: int  # where a string started that never ends, or -1
    exhausted: bool  # the token budget ran out before `hi`


def _scan(text: str, lo: int, hi: int, budget: _Budget) -> _Scan:
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    open_string = -1
    pos = lo
    while True:
        m = _TOKEN.search(text, pos, hi)
        if m is None:
            return _Scan(sorted(pairs), stack, open_string, False)
        if budget.tokens <= 0:
            return _Scan(sorted(pairs), stack, open_string, True)
        budget.tokens -= 1
        i = m.start()
        ch = text[i]
        pos = i + 1
        if ch in "\"'":
            # A quote opens a string only inside a value, where a string may start.
            if stack and _value_start(text, i, lo):
                s = (_DQ if ch == '"' else _SQ).match(text, i, hi)
                if s is not None:
                    pos = s.end()
                elif ch == '"' and open_string < 0:
                    open_string = i
        elif ch in "{[":
            stack.append((i, _CLOSER[ch]))
        else:
            for k in range(len(stack) - 1, max(-1, len(stack) - 9), -1):
                if stack[k][1] == ch:  # a closer also closes up to 8 openers left open inside it
                    pairs.append((stack[k][0], i + 1))
                    del stack[k:]
                    break


def _value_start(text: str, i: int, lo: int) -> bool:
    j = i - 1
    stop = max(lo, i - 64)
    while j >= stop and text[j] in " \t\r\n":
        j -= 1
    return j >= stop and text[j] in "{[,:"


def _find(ctx: _Ctx, lo: int, hi: int) -> list[_Found]:
    """The calls among the balanced values in text[lo:hi], outermost values first."""
    text = ctx.text
    scan = _scan(text, lo, hi, ctx.budget)
    cands: list[tuple[int, int, bool]] = [(a, b, True) for a, b in scan.pairs]
    if not scan.exhausted:
        # A value left open at the end (forgot its last brace, or was cut off), unless a block
        # closes after it: then the block is looked at again within its own bounds.
        tops = [p for p, _ in scan.unclosed if not _value_start(text, p, lo)]
        for p in tops[-_MAX_REPAIRS:]:
            if _BLOCK_CLOSE.search(text, p, hi) is None:
                cands.append((p, hi, False))
    cands.sort(key=lambda c: c[0])
    found: list[_Found] = []
    deferred: list[tuple[int, int, bool, str]] = []
    skip = lo
    for start, end, complete in cands:
        if start < skip or end - start > _MAX_CANDIDATE:
            continue
        if not ctx.mentioned(start, end):
            skip = end  # no tool name anywhere inside: no call inside either
            continue
        if ctx.budget.candidates <= 0:
            break
        ctx.budget.candidates -= 1
        if complete:
            ok, value, error = _decode(text[start:end], ctx.budget)
        else:
            ok, value, error = _repair(text, start, hi, scan, ctx.budget)
        if ok:
            calls = _interpret(value, ctx, 0)
            if calls:
                found.append(_Found(start, end, calls))
            skip = end  # a JSON value that is not a call holds none either
        else:
            deferred.append((start, end, complete, error))
    for start, end, complete, error in deferred:
        if any(start <= f.start < end or f.start <= start < f.end for f in found):
            continue  # a call found inside it wins; or it lies inside an unreadable call
        call = _salvage(ctx, text[start:end], complete, error)
        if call is not None:
            found.append(_Found(start, end, [call]))
    found.sort(key=lambda f: f.start)
    return found


def _repair(text: str, start: int, hi: int, scan: _Scan, budget: _Budget) -> tuple[bool, Any, str]:
    """A value the model left unclosed (forgot the last brace, or stopped): close it and decode."""
    if start <= scan.open_string:
        return False, None, "cut off inside a string"
    closers = "".join(c for p, c in reversed(scan.unclosed) if p >= start)
    body = text[start:hi].rstrip()
    if body.endswith(","):
        body = body[:-1]
    return _decode(body + closers, budget)


def _salvage(ctx: _Ctx, chunk: str, complete: bool, error: str) -> _Call | None:
    """An unreadable value that clearly is a call: its arguments if they read alone, else an error."""
    name = None
    for m in islice(_NAME_RE.finditer(chunk), 16):
        name = ctx.names.resolve(m.group(1))
        if name is not None:
            break
    if name is None or (not complete and not _STARTS_AS_CALL.match(chunk)):
        return None
    am = _ARGS_RE.search(chunk)
    if am is not None:
        scan = _scan(chunk, am.end(), len(chunk), ctx.budget)
        pair = next((p for p in scan.pairs if p[0] == am.end()), None)
        if pair is not None:
            ok, value, _ = _decode(chunk[pair[0] : pair[1]], ctx.budget)
            if ok and isinstance(value, dict):
                return name, value, None
    if not complete:
        return name, {}, "the tool call was cut off before its JSON closed; send the whole call again"
    return name, {}, f"the tool call is not valid JSON ({error}); write it as one JSON object"


# --- decoding: strict JSON first, then the usual slips of small models ------------------------


def _decode(s: str, budget: _Budget) -> tuple[bool, Any, str]:
    """(ok, value, error): JSON, a Python literal, then both with trailing commas dropped,
    raw control characters escaped inside strings and the other language's true/false/null."""
    first = ""
    for python, repaired in ((False, False), (True, False), (False, True), (True, True)):
        if python and len(s) > _MAX_LITERAL:
            continue
        if budget.decode < len(s):
            return False, None, first or "too large to read"
        budget.decode -= len(s)
        candidate = _normalize(s, python=python) if repaired else s
        ok, value, error = _literal(candidate) if python else _json(candidate)
        if ok:
            return True, value, ""
        first = first or error
    return False, None, first or "too large to read"


def _json(s: str) -> tuple[bool, Any, str]:
    try:
        value = json.loads(s, strict=False)  # strict=False: raw newlines inside strings are fine
    except json.JSONDecodeError as exc:
        return False, None, f"{exc.msg} at char {exc.pos}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return False, None, type(exc).__name__
    return _checked(value)


def _literal(s: str) -> tuple[bool, Any, str]:
    if len(s) > _MAX_LITERAL:
        return False, None, "too large"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in the model's strings
            value = ast.literal_eval(s)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        return False, None, type(exc).__name__
    return _checked(value)


def _checked(value: Any) -> tuple[bool, Any, str]:
    try:
        return True, _jsonable(value, 0), ""
    except ValueError as exc:
        return False, None, str(exc)


def _jsonable(value: Any, depth: int) -> Any:
    """`value` as JSON data (tuples become lists); ValueError for anything JSON cannot hold."""
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("object keys must be strings")
        return {k: _jsonable(v, depth + 1) for k, v in value.items()}
    raise ValueError(f"{type(value).__name__} is not a JSON value")


def _normalize(s: str, *, python: bool) -> str:
    def fix(m: re.Match[str]) -> str:
        tok = m.group(0)
        if tok[0] in "\"'":
            tok = _CONTROL.sub(lambda c: _ESCAPES.get(c.group(0), f"\\u{ord(c.group(0)):04x}"), tok)
            return tok.replace("\\/", "/") if python else tok
        if tok == ",":
            return ""
        return (_TO_PY if python else _TO_JSON).get(tok, tok)

    return _NORMALIZE.sub(fix, s)


# --- interpretation: which decoded values are calls -------------------------------------------


def _interpret(value: Any, ctx: _Ctx, depth: int) -> list[_Call]:
    if depth > 4:
        return []
    if isinstance(value, list):
        out: list[_Call] = []
        for item in value[:64]:
            if isinstance(item, dict | list):
                out += _interpret(item, ctx, depth + 1)
        return out
    if not isinstance(value, dict):
        return []
    call = _one(value, ctx, depth)
    if call is not None:
        return [call]
    keys = {k.lower(): k for k in value if isinstance(k, str)}
    for key in _WRAPPER_KEYS:  # {"tool_calls": [...]}, {"function_call": {...}}
        inner = value[keys[key]] if key in keys else None
        if isinstance(inner, dict | list):
            got = _interpret(inner, ctx, depth + 1)
            if got:
                return got
    return []


def _one(d: dict[str, Any], ctx: _Ctx, depth: int) -> _Call | None:
    """`d` as one call, when it names an offered tool: {"name": N, "arguments": A} and kin."""
    if depth > 4:
        return None
    keys = {k.lower(): k for k in d if isinstance(k, str)}
    name: str | None = None
    name_key = ""
    for key in _NAME_KEYS:
        k = keys.get(key)
        if k is None:
            continue
        v = d[k]
        if isinstance(v, dict):  # {"function": {"name": N, "arguments": A}}, {"type": "function", ...}
            inner = _one(v, ctx, depth + 1)
            if inner is not None:
                return inner
        elif (resolved := ctx.names.resolve(v)) is not None:
            name, name_key = resolved, k
            break
    if name is None:
        return None
    params = d[keys["parameters"]] if "parameters" in keys else None
    if "description" in keys and isinstance(params, dict) and ("properties" in params or "type" in params):
        return None  # a tool's definition, echoed from the prompt's <tools> listing
    for key in _ARG_KEYS:
        k = keys.get(key)
        if k is not None:
            args, error = _arguments(d[k], ctx.budget)
            return name, args, error
    # No arguments key: the other keys are the arguments ({"tool": "grep", "pattern": "x"}).
    extras = {k: v for k, v in d.items() if k != name_key and str(k).lower() not in _NOT_ARGS}
    return name, extras, None


def _arguments(value: Any, budget: _Budget) -> tuple[dict[str, Any], str | None]:
    if value is None:
        return {}, None
    if isinstance(value, str):  # the OpenAI wire form: a JSON string holding the object
        if not value.strip():
            return {}, None
        ok, decoded, error = _decode(value, budget)
        if not ok:
            return {}, f"arguments are not valid JSON ({error})"
        value = decoded
    if isinstance(value, dict):
        return value, None
    return {}, "arguments must be a JSON object"


# --- blocks: <tool_call> tags, <function=NAME> tags and fences --------------------------------


def _blocks(ctx: _Ctx, bare: list[_Found], starts: list[int]) -> list[_Block]:
    text = ctx.text
    out: list[_Block] = []
    pos = 0
    hints = _MAX_HINTS
    while len(out) < _MAX_BLOCKS and hints > 0:
        h = _OPENER_HINT.search(text, pos)
        if h is None:
            break
        hints -= 1
        m = _OPENER.match(text, h.start())
        if m is None or (
            m.group("fence") and m.group("fence")[0] == "~" and not _line_start(text, h.start())
        ):
            pos = h.start() + 1
            continue
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and bare[i].end > m.start():
            pos = bare[i].end  # the opener is inside a call, in one of its strings
            continue
        lo = m.end()
        if m.group("tag"):
            label = m.group("tag").lower()
            close = re.compile(rf"</\s*{label}\s*>", re.I)
            c_lo, c_hi = _closer(ctx, close, lo, bare, starts)
            tail = lo
            k = bisect.bisect_left(starts, c_lo) - 1
            if k >= 0 and bare[k].start >= lo:
                tail = bare[k].end
            nxt = _TAG_OPEN.search(text, tail, c_lo)  # an unclosed tag ends where the next one opens
            if nxt is not None:
                c_lo = c_hi = nxt.start()
            block = _Block(m.start(), c_hi, lo, c_lo, "tag", label)
        elif m.group("fname"):
            c_lo, c_hi = _closer(ctx, re.compile(r"</function\s*>", re.I), lo, bare, starts)
            block = _Block(m.start(), c_hi, lo, c_lo, "function", m.group("fname"))
        else:
            run = m.group("fence")
            close = re.compile(re.escape(run[0]) + "{" + str(len(run)) + ",}")
            c_lo, c_hi = _closer(ctx, close, lo, bare, starts)
            block = _Block(m.start(), c_hi, lo, c_lo, "fence", m.group("lang").lower())
        out.append(block)
        pos = max(block.end, m.end())
    return out


def _line_start(text: str, i: int) -> bool:
    """Only spaces or tabs before position `i` on its line (where a ~~~ fence may open)."""
    line = text.rfind("\n", max(0, i - 64), i) + 1
    return (line > 0 or i < 64) and not text[line:i].strip(" \t")


def _closer(
    ctx: _Ctx, close: re.Pattern[str], lo: int, bare: list[_Found], starts: list[int]
) -> tuple[int, int]:
    """Where a block opened at `lo` closes: the first closer not inside a call found in it."""
    at = lo
    for _ in range(16):
        c = ctx.search(close, at)
        limit = c.start() if c is not None else len(ctx.text)
        k = bisect.bisect_left(starts, limit) - 1
        if k >= 0 and bare[k].start >= lo and bare[k].end > limit:
            at = bare[k].end
            continue
        return (limit, c.end()) if c is not None else (limit, limit)
    return len(ctx.text), len(ctx.text)


def _block_calls(ctx: _Ctx, block: _Block) -> list[_Call]:
    """Calls in a block the first pass found none in: look again inside its bounds alone."""
    found = _find(ctx, block.inner_lo, block.inner_hi)
    if found:
        return [c for f in found for c in f.calls]
    body = ctx.text[block.inner_lo : block.inner_hi].strip()
    if block.kind == "function":
        return [_function_tag(ctx, block.label, body)]
    if block.kind == "fence" and block.label not in _CALL_FENCES:
        return []
    call = _python_call(ctx, body)
    if call is not None:
        return [call]
    if block.kind == "tag" and block.label in _EXPLICIT_TAGS:
        error = _tag_error(ctx, block.label, body)
        if error is not None:
            return [error]
    return []


def _function_tag(ctx: _Ctx, raw_name: str, body: str) -> _Call:
    """`<function=NAME>{arguments}</function>`, the Llama 3 custom-tool form."""
    name = ctx.names.resolve(raw_name)
    if name is None:
        return raw_name[:64], {}, _unknown(ctx, raw_name)
    if not body:
        return name, {}, None
    ok, value, error = _decode(body, ctx.budget)
    if not ok:
        return name, {}, f"arguments are not valid JSON ({error})"
    if not isinstance(value, dict):
        return name, {}, "arguments must be a JSON object"
    return name, value, None


def _python_call(ctx: _Ctx, body: str) -> _Call | None:
    """`view(path="/memories")`: a call in Python syntax, as some models write in a tag or fence."""
    if not body or len(body) > _MAX_LITERAL or "(" not in body:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            node = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(node, ast.Call):
        return None
    parts: list[str] = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    name = ctx.names.resolve(".".join([func.id, *reversed(parts)]))
    if name is None:
        return None
    if node.args:
        return name, {}, f"pass the arguments by name, as {name}(argument=value, ...)"
    args: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            return name, {}, "write each argument as argument=value"
        try:
            args[kw.arg] = _jsonable(ast.literal_eval(kw.value), 0)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return name, {}, f"argument {kw.arg} must be a literal value"
    return name, args, None


def _tag_error(ctx: _Ctx, label: str, body: str) -> _Call | None:
    """An explicit `<tool_call>` block that holds no readable call: an error the model can act on."""
    form = 'put one JSON object in it: {"name": <tool name>, "arguments": {...}}'
    if not body:
        return "", {}, f"the <{label}> block is empty; {form}"
    if body[0] not in "{[`":
        return None  # prose that mentions the tag, not a call
    ok, value, error = _decode(body.strip("`").removeprefix("json").strip(), ctx.budget)
    if not ok:
        return "", {}, f"the <{label}> block is not valid JSON ({error}); {form}"
    if isinstance(value, dict):
        keys = {k.lower(): k for k in value if isinstance(k, str)}
        raw = next(
            (value[keys[k]] for k in _NAME_KEYS if k in keys and isinstance(value[keys[k]], str)), None
        )
        if isinstance(raw, str):
            if ctx.names.resolve(raw) is not None:
                return "", {}, f"the <{label}> block does not hold a call of {raw}; {form}"
            return raw[:64], {}, _unknown(ctx, raw)
    return "", {}, f"the <{label}> block names no tool; {form}"


def _unknown(ctx: _Ctx, raw: str) -> str:
    known = sorted(ctx.names.exact)
    listing = ", ".join(known[:24]) + (", ..." if len(known) > 24 else "")
    return f"unknown tool {raw[:64]!r}; the tools are: {listing}"
