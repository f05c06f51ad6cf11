"""Retrieval for the offline executor: whole entries ranked lexically against the task text.

It goes through the read-only `search` harness like any search agent would, so every read is
metered. Until the BM25 tool lands it ranks with `grep`: one alternation pattern of the task's
content words, each file scored by the inverse document frequency of the words it contains.
Swapping in BM25 is the one line :data:`DEFAULT` (a retriever over `bm25_full_search`).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from memdir.store import frontmatter
from memdir.tools.profiles import Harness

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "some",
        "two",
        "in",
        "on",
        "at",
        "with",
        "under",
        "and",
        "it",
        "them",
        "put",
        "find",
        "look",
        "examine",
        "of",
        "to",
    ]
)
_HIT = re.compile(r"^(/memories/\S+?\.md):(\d+): ", re.MULTILINE)
_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


@dataclass(frozen=True)
class Doc:
    path: str
    text: str

    @property
    def metadata(self) -> dict[str, object]:
        return frontmatter.parse(self.text).metadata


def terms(task: str) -> list[str]:
    words = re.findall(r"[a-z]+", task.lower())
    return sorted({w for w in words if w not in STOP and len(w) > 1})


def read_whole(harness: Harness, path: str) -> str:
    """A file's text as the model would get it from `view`, line numbers removed."""
    text = harness.call_or_raise("view", {"path": path})
    return _NUMBERED.sub("", text.split("\n", 1)[1] if "\n" in text else "")


def grep_retrieve(harness: Harness, task: str, k: int) -> list[Doc]:
    """Top-k whole files for the task text; folder indexes (MEMORY.md) are not entries."""
    words = terms(task)
    if not words:
        return []
    res = harness.call("grep", {"pattern": r"\b(" + "|".join(words) + r")\b", "max_results": 100_000})
    if res.is_error or res.text.startswith("No lines match"):
        return []
    found: dict[str, set[str]] = defaultdict(set)
    body = res.text.split("\n", 1)[1] if "\n" in res.text else ""
    for line in body.splitlines():
        m = _HIT.match(line)
        if not m or m.group(1).endswith("/MEMORY.md"):
            continue
        text = line[m.end() :].lower()
        found[m.group(1)] |= {w for w in words if re.search(rf"\b{w}\b", text)}
    if not found:
        return []
    df: dict[str, int] = defaultdict(int)
    for ws in found.values():
        for w in ws:
            df[w] += 1
    n = len(found)
    score = {p: sum(math.log(1 + n / df[w]) for w in ws) for p, ws in found.items()}
    best = sorted(score, key=lambda p: (-score[p], [-ord(c) for c in p]))[:k]  # ties: later files first
    return [Doc(p, read_whole(harness, p)) for p in best]


Retriever = Callable[[Harness, str, int], list[Doc]]
DEFAULT: Retriever = grep_retrieve
