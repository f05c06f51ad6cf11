"""The text a JSON schema forces next, offered to the model as a draft it verifies in one batch.

A schema-held reply of the split curator is about half text the model has no choice over: the
keys of every fact in the schema's order (`"kind": "`, `", "attribute": "`...), the closing
brackets, and each turn's key in the chunk's order (`], "S1T4": [`). Written token by token,
each of those tokens costs a full decode; evaluated as a batch, several cost little more than
one (docs/local-model.md; the figures: benchmarks/results/2026-12-06-docstring-figures.md,
"models/forced.py"; the whole reply's time side by side: `benchmarks/grammar_sampling.py`). This
is the "jump-forward" of constrained decoding: the server (`llama_server.py`) drafts the forced
text and llama-cpp-python's generation loop (`Llama.draft_model`) verifies it, keeping the
drafted tokens up to the first one the model would not have written; the grammar still decides
every token.

Drafts looked up in the context instead (prompt-lookup decoding) were measured and not kept:
most drafts ran past the forced text into content the model wrote otherwise, so the batches
were paid for and thrown away.

`forced_text` is pure (the schema and the reply so far in, the forced continuation out);
`install_schema_drafts` wires it into the server. The batch's floating-point sums differ from a
single token's, so a near-tie between two tokens may fall the other way than without drafts:
the reply is a greedy reply of the model, not always byte for byte the one the library writes.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from memdir.jsontypes import JsonValue

MAX_DRAFT = 16  # tokens; a batch of 16 verified at once costs about 5 single decodes
_MOST_FORCED = 2000  # characters: more than any draft, a bound for a schema of constants
_WS = " \t\n\r"


@dataclass
class _Frame:
    node: dict[str, Any]
    is_object: bool
    seen: list[str] = field(default_factory=list)  # keys written so far (objects)
    items: int = 0  # values written so far (arrays)
    key: str | None = None  # the key whose value comes next (objects)
    after_value: bool = False  # a value just ended: `,` or the close comes next


def _required(node: dict[str, Any]) -> list[str]:
    """Required keys in the order llama.cpp's schema grammar writes them (the properties' order)."""
    required = set(node.get("required", ()))
    return [k for k in node.get("properties", {}) if k in required]


def _opening(node: dict[str, Any] | None) -> str:
    """What a value of `node` must begin with, up to the model's first choice."""
    if not isinstance(node, dict):
        return ""
    if "const" in node:
        return json.dumps(node["const"])
    if len(node.get("enum", ())) == 1:  # one allowed value: a constant by another name
        return json.dumps(node["enum"][0])
    kind = node.get("type")
    if kind == "string":
        return '"'
    if kind == "object":
        keys = _required(node)
        return "{" + (f'"{keys[0]}": ' + _opening(node["properties"][keys[0]]) if keys else "")
    if kind == "array":
        if node.get("maxItems") == 0:
            return "[]"
        return "[" + (_opening(node.get("items")) if node.get("minItems", 0) > 0 else "")
    return ""


def _next_key(frame: _Frame) -> str:
    """`"key": ` and the opening of its value for the next required key not yet written, or ""."""
    keys = [k for k in _required(frame.node) if k not in frame.seen]
    return f'"{keys[0]}": ' + _opening(frame.node["properties"].get(keys[0])) if keys else ""


def _closes(frame: _Frame) -> bool:
    """Whether the object must close now: every key written and no other allowed."""
    unwritten = set(frame.node.get("properties", {})) - set(frame.seen)
    return not unwritten and frame.node.get("additionalProperties") is False


def _after_value(stack: list[_Frame]) -> str:
    """What must follow a finished value in the innermost container, through any closes."""
    if not stack:
        return ""
    top = stack[-1]
    if top.is_object:
        if set(top.seen) - set(top.node.get("properties", {})):
            return ""  # a key the schema does not name: not ours to guess
        nxt = _next_key(top)
        if nxt:
            return ", " + nxt
        return "}" + _after_value(stack[:-1]) if _closes(top) else ""
    limit = top.node.get("maxItems")
    if limit is not None and top.items >= limit:
        return "]" + _after_value(stack[:-1])
    return ""


# A string (its closing quote missing when it is unfinished), a bracket or punctuation, a
# literal, a run of whitespace.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?P<close>")?|[{}\[\]:,]|[^\s{}\[\]:,"]+|\s+', re.S)


def forced_text(schema: Mapping[str, JsonValue], reply: str) -> str:
    """The text `schema` leaves no choice over right after `reply` (a prefix of a reply held to
    it, whitespace as the model writes it: `{"a": 1, "b": [2]}`); "" where the model chooses.
    A forced value (a constant) is followed by what the schema forces after it, and so on."""
    forced = ""
    while len(forced) < _MOST_FORCED and (more := _forced_step(schema, reply + forced)):
        forced += more
    return forced


def _forced_step(schema: Mapping[str, JsonValue], reply: str) -> str:
    """`forced_text` up to the end of the next forced value. The schema's nodes are read as
    loosely as llama.cpp's grammar builder reads them (a JSON Schema is the standard's)."""
    stack: list[_Frame] = []
    expect: dict[str, Any] | None = dict(schema)  # the node of the value that comes next, if one does
    pending = ""  # an unfinished string or literal at the end
    for m in _TOKEN.finditer(reply):
        tok = m.group()
        if tok[0] == '"' and m.group("close") is None:
            pending = tok  # an unfinished string: only the end of the reply can hold one
            break
        if tok.isspace():
            continue
        if tok == "{":
            stack.append(_Frame(expect or {}, True))
            expect = None
        elif tok == "[":
            node = expect or {}
            stack.append(_Frame(node, False))
            expect = node.get("items") if isinstance(node.get("items"), dict) else None
        elif tok in "}]":
            if stack:
                stack.pop()
            if stack:
                stack[-1].after_value = True
                stack[-1].items += 1
            expect = None
        elif tok == ":":
            top = stack[-1] if stack else None
            expect = top.node.get("properties", {}).get(top.key) if top and top.key else None
        elif tok == ",":
            top = stack[-1] if stack else None
            if top is not None:
                top.after_value = False
                expect = None if top.is_object else top.node.get("items")
        elif stack and stack[-1].is_object and expect is None and not stack[-1].after_value:
            key = json.loads(tok) if tok.startswith('"') else tok
            stack[-1].key = str(key)
            stack[-1].seen.append(str(key))
        else:  # a finished string or literal value
            if stack:
                stack[-1].after_value = True
                stack[-1].items += 1
            expect = None
    else:
        pending = ""
    top = stack[-1] if stack else None
    if pending:
        if top is not None and top.is_object and not top.after_value and expect is None:
            keys = [k for k in _required(top.node) if k not in top.seen]
            written = pending[1:]
            if keys and keys[0].startswith(written):
                return keys[0][len(written) :] + '": ' + _opening(top.node["properties"].get(keys[0]))
        return ""
    ends_blank = reply[-1:] in tuple(_WS) if reply else False
    if top is None:
        return _opening(expect) if not reply.strip() else ""
    if top.after_value:
        text = _after_value(stack)
        return text[1:] if ends_blank and text.startswith(", ") else text
    if top.is_object and expect is None:
        if reply.rstrip().endswith("{"):
            keys = _required(top.node)
            return f'"{keys[0]}": ' + _opening(top.node["properties"].get(keys[0])) if keys else ""
        keys = [k for k in _required(top.node) if k not in top.seen]
        if keys and reply.rstrip().endswith(","):
            return (
                ("" if ends_blank else " ") + f'"{keys[0]}": ' + _opening(top.node["properties"].get(keys[0]))
            )
        return ""
    if expect is not None:
        if (
            not top.is_object
            and top.items == 0
            and reply.rstrip().endswith("[")
            and top.node.get("minItems", 0) == 0
        ):
            return ""  # an empty list or a first item: the model's choice
        lead = "" if ends_blank or reply.rstrip().endswith(("[", "{")) else " "
        opening = _opening(expect)
        return lead + opening if opening else ""
    return ""


class SchemaDraft:
    """The `Llama.draft_model` of one generation: the forced text after the reply so far."""

    def __init__(self, llama: Any, schema: Mapping[str, JsonValue], prompt_tokens: int) -> None:
        self.llama = llama
        self.schema = schema
        self.prompt_tokens = prompt_tokens

    def __call__(self, input_ids: npt.NDArray[np.intc], /, **kwargs: Any) -> npt.NDArray[np.intc]:
        reply = self.llama.detokenize(list(input_ids[self.prompt_tokens :])).decode("utf-8", "ignore")
        text = forced_text(self.schema, reply)
        if not text:
            return np.empty(0, dtype=np.intc)
        ids = self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        return np.asarray(ids[:MAX_DRAFT], dtype=np.intc)


def _schema_of(response_format: Any) -> Mapping[str, JsonValue] | None:
    if not isinstance(response_format, dict):
        return None
    schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else None


def install_schema_drafts() -> None:
    """Draft the forced text of every schema-held generation; others run as the library runs them."""
    import llama_cpp

    chat = llama_cpp.Llama.create_chat_completion
    generate_ = llama_cpp.Llama.generate
    eval_ = llama_cpp.Llama.eval

    @functools.wraps(chat)
    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._memdir_schema = _schema_of(kwargs.get("response_format"))
        try:
            return chat(self, *args, **kwargs)
        finally:
            self._memdir_schema = None

    @functools.wraps(generate_)
    def generate(self: Any, tokens: Any, *args: Any, **kwargs: Any) -> Any:
        schema = getattr(self, "_memdir_schema", None)
        self.draft_model = None if schema is None else SchemaDraft(self, schema, len(tokens))
        self._memdir_prompt_pending = True
        return generate_(self, tokens, *args, **kwargs)

    @functools.wraps(eval_)
    def eval_batch(self: Any, tokens: Any) -> None:
        """The prompt as the library evaluates it (last logits only); a token and its draft with
        every position's logits, which the verification samples from."""
        if self.draft_model is None or self._memdir_prompt_pending or len(tokens) > self.n_batch:
            self._memdir_prompt_pending = False
            eval_(self, tokens)
            return
        if not tokens:
            return
        batch = list(tokens)
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        n_past = self.n_tokens
        self._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
        self._ctx.decode(self._batch)
        self.input_ids[n_past : n_past + len(batch)] = batch
        self.n_tokens += len(batch)
        self._requires_eval = False

    setattr(llama_cpp.Llama, "create_chat_completion", create_chat_completion)  # noqa: B010
    setattr(llama_cpp.Llama, "generate", generate)  # noqa: B010
    setattr(llama_cpp.Llama, "eval", eval_batch)  # noqa: B010
