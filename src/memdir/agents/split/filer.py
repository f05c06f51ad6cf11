"""Where to file it: validated facts written by rule into the offline curator's taxonomy.

The filer decides nothing the offline curator does not: it calls the `Curator`'s own filing
(`open_roots`, `people`, `file_keyed`, `file_line`, `file_said`), so a person's folder, the
`facts.md` sections with dated supersede, the topic and day files and the `MEMORY.md` indexes
are one implementation whoever extracted the facts. Every write is a call through the `manage`
harness (metered, guarded, journaled), and the chunk's calls run inside one `Store.step`, so
the journal records the chunk as one step, as `consolidate` and `landing` do for theirs.

- kinds `fact`, `preference`, `relation`: the live keyed line of (subject, attribute) in the
  subject's `facts.md`, superseding a different value with the turn's date
  (docs/conventions.md, "Keyed facts and dated supersede"), when the attribute is single-valued and the value
  fits it (`keys.py`: a wrong key strikes a true value through); otherwise a distilled line,
  counted as withheld. A second value of one key within a chunk is not a change of value over
  time (two hobbies named in one breath), so it is filed as a distilled line instead of
  striking the first;
- kinds `event`, `plan`: a distilled line, `- DATE: SUBJECT | KIND: VALUE [LOC]`
  (`conventions.distilled_line`), in the subject's file for the cited turn's topic and day;
- first, the offline curator's keyed rules over each turn (`offline/extract.keyed_facts`: "I
  live in X now", "switched my workout to Y"): a 1.5B model often skips a change said in one
  line ("My taste has changed: Mexican is my favorite cuisine now."), and a key left stale is
  a value served as current after it ended (update accuracy, docs/metrics.md); a model's fact
  of a key so filed in the chunk is a distilled line;
- then every turn of the chunk verbatim, as the offline curator keeps them: a small extractor
  misses facts, and the verbatim lines keep them findable.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.agents.offline.curator import Curator
from memdir.agents.offline.extract import keyed_facts
from memdir.agents.offline.speakers import is_assistant, is_user
from memdir.agents.split.keys import keyed_attribute
from memdir.agents.split.validate import Fact
from memdir.conventions import distilled_line, key_of, neutralize_locators
from memdir.stream import Chunk
from memdir.tools.profiles import Harness

KEYED_KINDS = frozenset({"fact", "preference", "relation"})
STEP_TOOL = "split_curation"


@dataclass
class Filed:
    keyed: int = 0
    distilled: int = 0
    verbatim: int = 0
    superseded: int = 0
    withheld: int = 0  # keyed kinds filed distilled: their key may not supersede (keys.py)
    tool_calls: int = 0
    assistant: int = 0  # facts about the assistant, who is never a person (docs/conventions.md)
    ruled: int = 0  # keyed facts of the offline curator's rules (agents/offline/extract.py)


def file_chunk(harness: Harness, chunk: Chunk, facts: list[Fact], **meta: object) -> Filed:
    """Write `facts` and the chunk's turns as one journaled step."""
    curator = Curator(harness)
    filed = Filed()
    keyed_here: set[tuple[str, str]] = set()
    with harness.store.step(STEP_TOOL, **{**harness.meta, **meta}):
        curator.open_roots()
        user = curator.user_name(chunk)
        for turn in chunk.turns:  # the offline curator's keyed rules first: a change said as one
            if is_assistant(turn.speaker):
                continue
            person = user if is_user(turn.speaker) else turn.speaker
            for attr, value in keyed_facts(turn.text):
                if key_of(person, attr) not in keyed_here:
                    keyed_here.add(key_of(person, attr))
                    before = curator.result.keyed_written
                    curator.file_keyed(person, attr, value, turn)
                    filed.ruled += curator.result.keyed_written - before
        for f in facts:
            if is_assistant(f.subject):
                filed.assistant += 1
                continue
            subject = user if is_user(f.subject) else f.subject
            keyed = f.kind in KEYED_KINDS
            attribute = keyed_attribute(f.attribute, f.value, f.turn.text) if keyed else None
            filed.withheld += keyed and attribute is None
            if attribute is not None and key_of(subject, attribute) not in keyed_here:
                keyed_here.add(key_of(subject, attribute))
                before = curator.result.keyed_written
                curator.file_keyed(subject, attribute, f.value, f.turn)
                filed.keyed += curator.result.keyed_written - before
            else:
                day = f.date or f.turn.date
                value = neutralize_locators(f.value)  # a turn's `[S1T1]` cites nothing here
                curator.file_line(subject, f.turn, distilled_line(subject, f.kind, value, day, f.locators))
                filed.distilled += 1
        for person, turns in curator.people(chunk).items():
            curator.file_said(person, turns)
            filed.verbatim += len(turns)
    filed.keyed += filed.ruled
    filed.superseded = curator.result.superseded
    filed.tool_calls = len(curator.result.tool_calls)
    return filed
