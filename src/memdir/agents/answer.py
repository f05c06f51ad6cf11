"""The search agent's final answer: a JSON object with `answer` and `citations`, read tolerantly.

Models wrap the object in a fence, add prose around it, use single quotes, or forget the object
and write `Answer:` / `Citations:` lines. We try those forms in order and, failing all, keep the
whole reply as the answer and pick up any `/memories/...` citations written in it. What a
citation looks like is `memdir.conventions` (the grammar the evaluation resolves).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

from memdir.conventions import find_citations


class AnswerRecord(TypedDict):
    answer: str
    citations: list[str]


@dataclass
class ParsedAnswer:
    """An answer as read off a model's reply: its text, the citations as written, and which form
    it was read from (the API's `Answer` resolves the citations against the store)."""

    answer: str
    citations: list[str] = field(default_factory=list)
    parsed: str = "json"  # json | lines | fallback

    def as_dict(self) -> AnswerRecord:
        return {"answer": self.answer, "citations": self.citations}


def _objects(text: str) -> list[str]:
    """Balanced {...} substrings, last first (the final answer closes the reply)."""
    found: list[str] = []
    depth, start, in_str, esc, quote = 0, -1, False, False, ""
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                in_str = False
            continue
        if ch in "\"'" and depth > 0:
            in_str, quote = True, ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return list(reversed(found))


def _load(obj_text: str) -> dict[str, Any] | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(obj_text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _citations(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[;\n]|,\s*(?=/memories)", value) if v.strip()]
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for v in value:
        if isinstance(v, dict):  # {"path": ..., "lines": "3-5"} and similar
            path = str(v.get("path") or v.get("file") or "")
            where = v.get("lines") or v.get("line_range") or v.get("section")
            v = (
                f"{path}:{where}"
                if where and not str(where).startswith("#")
                else f"{path} > {where}"
                if where
                else path
            )
        s = str(v).strip()
        if s:
            out.append(s)
    return out


_BRACKETED = re.compile(r"\s*\[([^\[\]]*/memories/[^\[\]]*)\]")


def _inline(answer: str) -> tuple[str, list[str]]:
    """The answer without the citations written in it in bracket notation (the search prompt asks
    for one after every claim, roles.CITE_EVERY_CLAIM), and those citations: the answer is
    scored as words, so `[/memories/a.md:3-5]` must not count as some. A locator such as
    `[S6T5]` names no path and stays."""
    parts = [p for m in _BRACKETED.finditer(answer) for p in re.split(r"[;,]\s*(?=/memories)", m.group(1))]
    found = [c for p in parts for c in find_citations(p)]
    return _BRACKETED.sub("", answer).strip(), found


def parse_answer(text: str) -> ParsedAnswer:
    for obj_text in _objects(text):
        obj = _load(obj_text)
        if obj is None:
            continue
        keys = {k.lower(): k for k in obj}
        if "answer" in keys:
            cites = _citations(obj.get(keys.get("citations", ""), obj.get(keys.get("sources", ""), [])))
            answer, inline = _inline(str(obj[keys["answer"]]))
            return ParsedAnswer(answer, cites + [c for c in inline if c not in cites], "json")
    m = re.search(r"(?im)^\s*\**answer\**\s*:\s*(.+)$", text)
    if m:
        rest = text[m.end() :]
        c = re.search(r"(?is)citations?\**\s*:\s*(.+)", rest)
        cites = find_citations(c.group(1) if c else rest)
        return ParsedAnswer(m.group(1).strip(), cites, "lines")
    return ParsedAnswer(text.strip(), find_citations(text), "fallback")
