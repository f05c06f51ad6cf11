"""The deterministic curator, an offline baseline policy: the management role with no model,
through the same tools.

Each turn is routed by speaker (one file per person, so a subject's keyed facts and their
history stay in one place) and by topic keys (a `## Topic` section), and appended verbatim as
a fact line with its locator under a dated `### YYYY-MM-DD` heading: every fact is kept.
Turns that state a keyed fact in a simple first-person pattern ("I now prefer tea", "I live in
Boston", "I work as a nurse") also update the `## Keyed facts` section with a dated supersede
exactly as docs/conventions.md writes it. It is a baseline, labelled so in every record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memdir.agents.offline.text import slug, topic_of
from memdir.conventions import key_of, parse_keyed
from memdir.stream import Chunk, Turn
from memdir.tools.profiles import Harness

PEOPLE = "/memories/people"
KEYED = "## Keyed facts"
ROOT_INDEX = """---
description: Root index of this memory; core memory, always loaded.
---
# Memory

- people/: one file per person, holding their keyed facts (current and past values) and everything
  they said, by topic and date. Start at /memories/people/MEMORY.md.
"""
PEOPLE_INDEX = """---
description: Index of the people folder; one file per person.
---
# People
"""

_STOPS = "and|but|because|since|so|which|for|with|after|when|now|over|than|instead|rather"
_END = rf"(?=\s*(?:[.,;!?]|\b(?:{_STOPS})\b|$))"
_VALUE = r"(?P<value>[A-Za-z0-9][^.,;!?]{0,60}?)" + _END
KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (attr, re.compile(rx, re.IGNORECASE))
    for attr, rx in (
        (
            "favorite {what}",
            r"\bmy (?:new )?fav(?:ou?rite)? (?P<what>[a-z]+(?: [a-z]+)?) is (?:now )?" + _VALUE,
        ),
        ("home", r"\bI(?:'ve| have)? (?:now |just |recently )?(?:live|moved|relocated) (?:in|to) " + _VALUE),
        ("job", r"\bI(?:'m| am)? (?:now |currently )?(?:work(?:ing)?|employed) as (?:an? )?" + _VALUE),
        ("job", r"\bmy (?:new )?job is (?:now )?(?:an? )?" + _VALUE),
        ("diet", r"\bI(?:'m| am) (?:now |currently )?(?:a )?(?P<value>vegan|vegetarian|pescatarian|keto)\b"),
        ("preference", r"\bI (?:now |currently |really )?(?:prefer|like|love|enjoy) " + _VALUE),
    )
)


def keyed_facts(text: str) -> list[tuple[str, str]]:
    """(attribute, value) pairs a turn states about its speaker; one per attribute, first wins."""
    found: dict[str, str] = {}
    for attr_t, rx in KEY_PATTERNS:
        for m in rx.finditer(text):
            groups = m.groupdict()
            attr = attr_t.format(what=groups.get("what") or "").strip()
            value = re.sub(r"\s+", " ", groups["value"]).strip(" '\"")
            if value and attr not in found:
                found[attr] = value
    return list(found.items())


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@dataclass
class CurationResult:
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    superseded: int = 0
    keyed_written: int = 0
    facts_written: int = 0


class Curator:
    """Integrates chunks into a store through a `manage` harness."""

    def __init__(self, harness: Harness) -> None:
        self.h = harness
        self.result = CurationResult()

    def _call(self, name: str, **args: Any) -> str:
        self.result.tool_calls.append({"name": name, "args": args})
        return self.h.call_or_raise(name, args)

    def _try(self, name: str, **args: Any) -> tuple[str, bool]:
        self.result.tool_calls.append({"name": name, "args": args})
        res = self.h.call(name, args)
        return res.text, res.is_error

    def _lines(self, path: str) -> list[str]:
        text = self._call("view", path=path)
        return [row.split("\t", 1)[1] if "\t" in row else "" for row in text.split("\n")[1:]]

    def _ensure_file(self, path: str, text: str) -> bool:
        _, missing = self._try("view", path=path, start_line=1, end_line=1)
        if missing:
            self._call("create", path=path, file_text=text)
            return True
        return False

    def integrate(self, chunk: Chunk) -> CurationResult:
        if not self._ensure_file("/memories/MEMORY.md", ROOT_INDEX):
            lines = self._lines("/memories/MEMORY.md")
            if not any("people/" in ln for ln in lines):
                self._call("insert", path="/memories/MEMORY.md", insert_line=len(lines),
                           insert_text=ROOT_INDEX.split("# Memory\n", 1)[1].strip("\n"))  # fmt: skip
        self._ensure_file(f"{PEOPLE}/MEMORY.md", PEOPLE_INDEX)
        by_speaker: dict[str, list[Turn]] = {}
        for turn in chunk.turns:
            by_speaker.setdefault(turn.speaker, []).append(turn)
        for speaker, turns in by_speaker.items():
            self._integrate_person(speaker, turns)
        return self.result

    def _integrate_person(self, speaker: str, turns: list[Turn]) -> None:
        name = slug(speaker)
        path = f"{PEOPLE}/{name}.md"
        header = (
            f"---\nname: {name}\ndescription: {speaker}: keyed facts (current and past values) and "
            f"everything {speaker} said, by topic and date\n---\n# {speaker}\n{KEYED}\n"
        )
        if self._ensure_file(path, header):
            lines = self._lines(f"{PEOPLE}/MEMORY.md")
            self._call("insert", path=f"{PEOPLE}/MEMORY.md", insert_line=len(lines),
                       insert_text=f"- {name}.md: {speaker}")  # fmt: skip
        subject = name.replace("-", " ")
        for turn in turns:
            for attr, value in keyed_facts(turn.text):
                self._keyed(path, subject, attr, value, turn)
        for turn in turns:
            self._append(path, turn)

    def _keyed(self, path: str, subject: str, attr: str, value: str, turn: Turn) -> None:
        date = turn.date or "unknown"
        live = f"- {subject} | {attr}: {value} (since {date}) [{turn.locator}]"
        lines = self._lines(path)
        key = key_of(subject, attr)
        for line in lines:
            kf = parse_keyed(path, 0, line)
            if kf is not None and kf.live and kf.key == key:
                if kf.value.strip().lower() == value.lower():
                    return  # already the current value
                locs = ", ".join(kf.locators)
                struck = f"- ~~{kf.subject} | {kf.attribute}: {kf.value}~~ ({kf.since} until {date}) [{locs}]"
                self._call("str_replace", path=path, old_str=line, new_str=f"{live}\n{struck}")
                self.result.superseded += 1
                self.result.keyed_written += 1
                return
        at = lines.index(KEYED) + 1
        self._call("insert", path=path, insert_line=at, insert_text=live)
        self.result.keyed_written += 1

    def _append(self, path: str, turn: Turn) -> None:
        topic = topic_of(turn.text).capitalize()
        date = turn.date or "undated"
        dated = f"- {turn.date}: " if turn.date else "- "
        fact = f"{dated}{turn.speaker}: {one_line(turn.text)} [{turn.locator}]"
        lines = self._lines(path)
        sec = f"## {topic}"
        if sec not in lines:
            self._call("insert", path=path, insert_line=len(lines), insert_text=f"{sec}\n### {date}\n{fact}")
            self.result.facts_written += 1
            return
        start = lines.index(sec)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        sub = f"### {date}"
        if sub in lines[start:end]:
            s = lines.index(sub, start)
            e = next((i for i in range(s + 1, end) if lines[i].startswith("#")), end)
            self._call("insert", path=path, insert_line=e, insert_text=fact)
        else:
            self._call("insert", path=path, insert_line=end, insert_text=f"{sub}\n{fact}")
        self.result.facts_written += 1
