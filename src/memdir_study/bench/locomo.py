"""LoCoMo (Maharana et al., ACL 2024): ten long two-person conversations, `locomo10.json`.

Categories follow the numbering of LoCoMo's own scorer (`task_eval/evaluation.py`), checked
against the data: 1 = multi-hop (its golds are comma-separated lists and the scorer averages
partial F1 over them, e.g. "What items did Calvin buy in March 2023?"), 2 = temporal (26 of
conv-50's 32 open "When ..." or "How long ..."), 3 = open-domain (commonsense inference,
"Would Calvin enjoy performing at the Hollywood Bowl?"; the scorer keeps the gold up to its
first `;`), 4 = single-hop, 5 = adversarial (excluded). conv-50 gives 32 / 32 / 7 / 87 = 158.

The evaluation order is the order of the non-adversarial questions in the file, counted from
1. The four golds that contradict the transcript sit at orders 20, 64, 112 and 138 in that
1-based count: 112 asks which Disney film *Dave* named, but Ratatouille is Calvin's (D19:6);
138 asks when *Calvin* got into cars, but the cited turn (D26:6) is Dave's; 20 adds a "car
museum" visit in Tokyo the cited turns never mention (D12:7 is a Ferrari dealership); 64 calls
the octopus guitar yellow, a colour the transcript never gives. Counted from 0 the same
numbers land on sound items (113 and 139 are correct), so the count is 1-based. They are
marked `defective=True` for conv-50 only.

Each conversation also carries `observation`: per session and speaker, the facts LoCoMo's authors
extracted (they used them for retrieval), each `[fact, evidence]` with evidence a `D1:3` id or a
list of them. `observations` reads them as a reference for what a curator should write (the
write-quality benchmark, docs/metrics.md); a reference, not a perfect key.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from memdir.chatlogs.dialogues import locomo_turns
from memdir.conventions import turn_numbers
from memdir.jsontypes import JsonValue, array, count, obj
from memdir_study.bench.data import LOCOMO_URL, UnknownSample, locate
from memdir_study.bench.evidence import parse_evidence
from memdir_study.bench.types import Question, Sample

DEFAULT = "conv-50"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DEFECTIVE_ORDERS = {"conv-50": frozenset({20, 64, 112, 138})}
SOURCE = "github.com/snap-research/LoCoMo, data/locomo10.json"


def load_all() -> list[Mapping[str, JsonValue]]:
    """The samples of locomo10.json, as parsed."""
    path = locate("locomo/locomo10.json", LOCOMO_URL, source=SOURCE)
    return [obj(s) for s in array(json.loads(path.read_text(encoding="utf-8")))]


def sample_ids() -> list[str]:
    return [str(s["sample_id"]) for s in load_all()]


def load(sample_id: str = DEFAULT, *, include_adversarial: bool = False) -> Sample:
    raw_all = load_all()
    found = [s for s in raw_all if s.get("sample_id") == sample_id]
    if not found:
        known = ", ".join(str(s.get("sample_id")) for s in raw_all)
        raise UnknownSample(f"LoCoMo has no conversation {sample_id!r}; choose one of {known}")
    return from_raw(found[0], include_adversarial=include_adversarial)


def from_raw(raw: Mapping[str, JsonValue], *, include_adversarial: bool = False) -> Sample:
    """The sample: its turns as the product reads them (`memdir.chatlogs.dialogues`), its questions."""
    sid = str(raw["sample_id"])
    conv = obj(raw["conversation"])
    turns, dates = locomo_turns(conv)
    defective = DEFECTIVE_ORDERS.get(sid, frozenset())
    questions: list[Question] = []
    for i, q in enumerate(map(obj, array(raw["qa"]))):
        code = count(q["category"])
        if code == 5 and not include_adversarial:
            continue
        order = len(questions) + 1
        gold = q.get("answer", q.get("adversarial_answer", ""))
        questions.append(
            Question(
                id=f"{sid}-q{i + 1}",
                category=CATEGORIES.get(code, f"category-{code}"),
                question=str(q["question"]),
                gold=str(gold),
                evidence=tuple(parse_evidence(array(q.get("evidence")))),
                category_code=code,
                order=order,
                defective=order in defective and not include_adversarial,
            )
        )
    speakers = [str(conv.get("speaker_a", "")), str(conv.get("speaker_b", ""))]
    return Sample("locomo", sid, turns, questions, dates, speakers=[s for s in speakers if s])


@dataclass(frozen=True)
class Observation:
    """One reference fact: `speaker` as the source files it, its `text`, and the locators of its
    evidence turns (`S1T3`), each naming a turn of the conversation."""

    session: int
    speaker: str
    text: str
    evidence: tuple[str, ...]


@dataclass
class Observations:
    """A conversation's reference facts, and what was skipped reading them, by reason (counted,
    never silently dropped: a malformed entry, evidence that names no turn)."""

    sample_id: str
    facts: list[Observation]
    skipped: Counter[str] = field(default_factory=Counter)

    def sliced(self, first: int, last: int) -> Observations:
        """The facts whose every evidence turn lies in sessions `first`..`last` (as `Sample.sliced`
        keeps questions): a slice's store is scored only on what its turns could hold."""

        def inside(loc: str) -> bool:
            return first <= (turn_numbers(loc) or (0, 0))[0] <= last

        kept = [o for o in self.facts if all(inside(e) for e in o.evidence)]
        return Observations(self.sample_id, kept, Counter(self.skipped))


def observations(sample_id: str = DEFAULT) -> Observations:
    """The reference facts of one conversation (`observation` of locomo10.json)."""
    for raw in load_all():
        if raw.get("sample_id") == sample_id:
            return observations_from_raw(raw)
    known = ", ".join(sample_ids())
    raise UnknownSample(f"LoCoMo has no conversation {sample_id!r}; choose one of {known}")


def observations_from_raw(raw: Mapping[str, JsonValue]) -> Observations:
    """Read leniently: evidence goes through `parse_evidence` (the messy ids questions have too);
    a locator naming no turn of the conversation is dropped, and an entry left with no evidence,
    with no text, or not a `[fact, evidence]` pair is skipped; each is counted by reason."""
    turns = {t.locator for t in from_raw(raw).turns}
    out = Observations(str(raw["sample_id"]), [])
    found = obj(raw.get("observation"))
    for key, entry in found.items():
        m = re.fullmatch(r"session_(\d+)_observation", key)
        if m is None or not isinstance(entry, Mapping):
            out.skipped["session entry not session_N_observation -> {speaker: [...]}"] += 1
            continue
        for speaker, items in entry.items():
            for item in items if isinstance(items, list) else [items]:
                if not (isinstance(item, list) and len(item) == 2 and str(item[0]).strip()):
                    out.skipped["not a [fact, evidence] pair"] += 1
                    continue
                evidence = item[1] if isinstance(item[1], list) else [item[1]]
                locs = parse_evidence(evidence)
                kept = tuple(loc for loc in locs if loc in turns)
                if len(kept) < len(locs):
                    out.skipped["evidence locator naming no turn (dropped)"] += len(locs) - len(kept)
                if not kept:
                    out.skipped["no evidence turn"] += 1
                    continue
                out.facts.append(Observation(int(m[1]), str(speaker), str(item[0]).strip(), kept))
    return out
