"""Stored text that addresses a model: the lines `memdir check` flags as `injection` (issue 49,
item 3; docs/health.md, "Text that addresses a model").

Memory is data. A line that tells the reader to ignore its instructions, plays a system or
assistant turn, carries a tool call, or asks to hide something from the user was written to
steer whichever model later reads it (memory poisoning), not to record what someone said. The
prompts show memory inside a data boundary (`store/boundary.py`) whatever it holds; this
module finds such lines so a person can look at them, and `withheld` keeps them out of the read
search's notes: a one-call answer from a small model copies what it is shown, and a stored
`{"name": "answer", ...}` line is the very shape of its reply (benchmarks/results/
2026-12-06-injection.md). The line's number stays, so citations still name lines on disk.

Each pattern names one way of addressing a model and is kept narrow, so ordinary chat ("you are
now a mom!", "ignore the noise") is not flagged: the false positives over every turn of LoCoMo
and REALTALK and over offline stores built from them are listed in
benchmarks/results/2026-12-06-injection.md. One alternation finds candidate lines in a file
without splitting it; each hit is then named by the first pattern that matches its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_I = re.IGNORECASE
_TARGETS = (
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|context|messages?|orders|"
    r"commands|programming|training)"
)
_READER = r"(?:ai|assistant|(?:language\s+)?model|llm|agent|chatbot|bot)"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|original|system|existing|initial)"

# (kind, why, pattern): the first that matches a line names it.
PATTERNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "override",
        "tells the reader to drop its instructions",
        re.compile(
            rf"\b(?:ignore|disregard|forget|override|bypass|skip)\b(?:\s+(?:all|any|every|of|the|your|my|"
            rf"these|those|its))*\s+{_EARLIER}\s+{_TARGETS}\b"
            rf"|\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?{_TARGETS}"
            rf"\s+(?:above|before|so far)\b"
            r"|\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+(?:you\s+(?:were|have\s+been)\s+"
            r"told|(?:written\s+|said\s+)?(?:above|before))"
            r"|\b(?:print|reveal|show|repeat|output|leak)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+prompt|"
            r"(?:initial|original|system)\s+instructions)\b"
            r"|\bnew\s+(?:system\s+)?(?:instructions?|system\s+prompt|rules)\s*:"
            r"|\b(?:override|updated?)\s*:\s*(?:answer|reply|respond|say)\b"
            r"|\bsystem\s+override\b|\bignore\s+(?:the|this|my)\s+(?:question|query|request)(?:\s*[.!;:,]|\s+and\b)"
            r"|\bI\s+(?:order|command|instruct)\s+you\s+to\b",
            _I,
        ),
    ),
    (
        "persona",
        "reassigns the reader's role",
        re.compile(
            r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+)?(?:\w+\s+){0,3}"
            r"(?:ai|assistant|model|bot|chatbot|agent|llm|gpt|dan|jailbroken|unrestricted|unfiltered)\b"
            r"|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|god|admin|jailbreak|unrestricted)\s*mode\b"
            r"|\bfrom\s+(?:now\s+on|this\s+point(?:\s+(?:on|forward))?|here\s+on),?\s+(?:you|the\s+"
            r"(?:ai|assistant|model))\s+(?:will|must|shall|should|answers?|repl(?:y|ies)|responds?|only|always|never)\b"
            r"|\b(?:act|behave|pretend)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|"
            r"jailbroken|unfiltered|evil)\b",
            _I,
        ),
    ),
    (
        "role-header",
        "plays a system, user or assistant turn",
        re.compile(
            r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>"
            r"|\[/?INST\]|<</?SYS>>|</?(?:system|instructions?|system_prompt)>"
            r"|(?:^|[-*>]\s+|\]\s*)(?:system|developer)\s*(?:prompt|message)?\s*:"
            r"|\b(?:user|human)\s*:.{0,200}?\b(?:assistant|ai)\s*:"
            r"|(?:^|[-*>:]\s+)(?:assistant|ai)\s*:"
            r"|^#{1,6}\s*(?:instructions?|system(?:\s+prompt)?|response)\s*:?\s*(?:$|[A-Z])",
            _I | re.MULTILINE,
        ),
    ),
    (
        "tool-call",
        "carries a tool call",
        re.compile(
            r"</?tool_call>|</?function_call>|</?tool_response>"
            r"|\{\s*\"(?:name|tool|function|tool_name)\"\s*:\s*\"[^\"]*\"\s*,\s*"
            r"\"(?:arguments|parameters|args|input)\"\s*:"
            r"|\"(?:tool_calls|function_call)\"\s*:",
            _I,
        ),
    ),
    (
        "concealment",
        "asks to keep something from the user",
        re.compile(
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|let|show)\b[\w\s]{0,30}?\bthe\s+user\b"
            r"|\bwithout\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b"
            r"|\b(?:hide|conceal|keep)\s+(?:this|it)\s+(?:secret\s+)?from\s+the\s+user\b",
            _I,
        ),
    ),
    (
        "exfiltration",
        "asks to run a command or send data out",
        re.compile(
            r"\b(?:curl|wget)\s+(?:-\S+\s+)*['\"]?https?://"
            r"|\|\s*(?:ba|z)?sh\b|\brm\s+-rf\s+[/~]"
            r"|\b(?:send|upload|post|forward|email|leak|exfiltrate)\s+(?:all\s+|every\s+|the\s+|your\s+|my\s+|"
            r"the\s+user'?s\s+)*(?:stored\s+)?(?:(?:memor(?:y|ies)|notes|files|conversations?|chat\s+history|"
            r"passwords?|credentials|api\s+keys?|secrets|ssh\s+keys?)(?:\s+and\s+|,\s*)?)+\s+to\b",
            _I,
        ),
    ),
    (
        "answer-rule",
        "dictates the reader's answers",
        re.compile(
            r"\b(?:the\s+)?(?:ai|assistant|model|llm|chatbot|language\s+model)\s+(?:must|should|shall|will)\s+"
            r"(?:now\s+)?(?:always\s+|only\s+|never\s+)?(?:answer|reply|respond|say|output|call|ignore)\b"
            r"|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+)?"
            r"(?:ai|assistant|(?:language\s+)?model|llm|agent|chatbot)s?\b"
            r"|\b(?:attention|hey|dear)\s+(?:ai|assistant|(?:language\s+)?model|llm|chatbot)\b"
            r"|\b(?:ai|assistant|model|llm|agent|chatbot)\s*:\s*(?:when|if|always|never|you\s+must)\b"
            r"|\bwhen(?:ever)?\s+(?:you\s+are|you're)\s+asked\b.{0,80}\b(?:say|answer|reply|respond|output)\b"
            r"|\b(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:only\s+)?(?:the\s+single\s+word|the\s+word|"
            r"exactly)\b"
            r"|\b(?:reply|respond|answer)\s+only\s+(?:with\s+)?['\"]?[A-Z]{4,}\b"
            r"|\bevery\s+(?:answer|reply|response)\s+must\b"
            rf"|^\W*{_READER}\s*,\s*(?:please\s+)?(?:ignore|disregard|forget|say|answer|reply|respond|tell|"
            r"talk|stop|write|output|always|never|do\s+not|don'?t)\b"
            rf"|\b(?:any|every)\s+{_READER}s?\s+(?:reading|that\s+reads|who\s+reads|processing)\s+"
            r"(?:this|these|the|my|our)\b"
            r"|\bwhoever\s+(?:answers|is\s+answering)\s+questions\b",
            _I,
        ),
    ),
)


WITHHELD = "[withheld: a stored line that addresses a model ({kind}); `memdir check` lists it]"
_ITEM = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?")


@dataclass(frozen=True)
class Hit:
    """One line that addresses a model: its number (1-based), the kind and the words that matched."""

    lineno: int
    kind: str
    why: str
    matched: str


def classify(line: str) -> tuple[str, str, str] | None:
    """(kind, why, matched words) of the first pattern `line` matches, or None."""
    for kind, why, pattern in PATTERNS:
        m = pattern.search(line)
        if m:
            return kind, why, m.group(0)
    return None


def withheld(line: str) -> str:
    """`line` as a model answering from memory is shown it: unchanged, or, when it addresses a
    model, `WITHHELD` naming its kind in place of its words (a list item keeps its marker)."""
    found = classify(line)
    if found is None:
        return line
    item = _ITEM.match(line)
    return (item.group(0) if item else "") + WITHHELD.format(kind=found[0])


def scan(text: str) -> Iterator[Hit]:
    """Every line of `text` (split at "\\n") that addresses a model, in order. Each pattern
    runs over the whole text (a file without a hit is never split into lines); a line a match
    starts on is then named by `classify` on that line alone."""
    starts = sorted({m.start() for _, _, pattern in PATTERNS for m in pattern.finditer(text)})
    lineno, counted, last = 1, 0, -1
    for pos in starts:
        start = text.rfind("\n", 0, pos) + 1
        lineno += text.count("\n", counted, start)
        counted = start
        if lineno == last:
            continue
        end = text.find("\n", pos)
        found = classify(text[start : len(text) if end == -1 else end])
        if found is not None:
            last = lineno
            yield Hit(lineno, *found)
