"""Write quality: what a curator wrote into a store, scored against the stream it read, with no
model (`memdir study bench writes`; the definitions are docs/metrics.md, "Write quality").

Every other figure of the study is an answer after a search agent, so a bad store and a bad
searcher look the same there. These figures read the store alone:

- its **fact lines** (lines citing a locator, `analytics.facts.fact_lines`) split into
  **verbatim turn lines** (a free-text line whose claim has content F1 >= `VERBATIM` against a
  turn it cites, the turn's text alone or with its speaker's name) and **distilled lines**
  (keyed facts, lines of the `SUBJECT | KIND: VALUE` grammar, events, summaries: every other
  fact line);
- **precision**: the share of lines that are *good*: supported by the turns they cite
  (`fact_quality.is_supported` against those turns' texts and the speakers' names) and not junk
  (`fact_quality.junk_reason` of the value of a keyed or `KIND` line; of the claim, judged as a
  whole line, for a free-text line). A line citing a locator that names no turn of the stream is *forged*, and
  unsupported;
- **fact recall** against a reference (LoCoMo's observations): an observation is kept when a
  fact line cites one of its evidence turns and has content F1 >= `KEPT` with it;
- **truth** of every distilled line of the `SUBJECT | ...` grammars (keyed and `KIND` lines):
  who, what and when by `memdir.fact_truth` (`false_lines` by reason: wrong subject, negated,
  wrong date, unsupported, vacuous, wrong kind), and **strict precision**, the share of lines
  good by the rules above and not false by these. Where a reference fact matches the line, the
  reference's subject decides who it is about. `precision` keeps its old meaning (support and
  junk only) beside it, so stores scored before compare.

The rules themselves (content words, junk, support, content F1) are `memdir.fact_quality`,
the ones the curators validate their own writes by, so a curator is judged by the rule it was
built to keep.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memdir.analytics.facts import FactLine, fact_lines
from memdir.conventions import DistilledFact, KeyedFact, normalize, parse_distilled, parse_keyed
from memdir.fact_quality import SUPPORTED, content_f1, is_supported, junk_reason
from memdir.fact_truth import REASONS, false_reason, line_of, reference_fits, reference_subject, stream_names
from memdir.jsontypes import JsonObject, JsonValue, array, count, counts, obj
from memdir.store.store import Store
from memdir.stream import Turn
from memdir_study.bench.locomo import Observation

VERBATIM = 0.9  # content F1 of a line's claim against a cited turn at which the line *is* the turn
KEPT = 0.3  # content F1 of a line's claim against an observation at which the line keeps it
GROUPS = ("all", "distilled", "verbatim")
EXAMPLES = 5  # junk and unsupported lines shown per store, to read what went wrong

_DATE = r"(?:\d{4}-\d{2}-\d{2}|unknown)"
_DATED = re.compile(rf"\((?:since\s+)?{_DATE}(?:\s+until\s+{_DATE})?\)|\b\d{{4}}-\d{{2}}-\d{{2}}\b", re.I)
_PUNCT = re.compile(r"\||:(?=\s|$)")


def claim_of(text: str) -> str:
    """What a fact line says: its text without locators, list and emphasis marks (`normalize`),
    dates (`(since D)`, `(D until D)`, bare ISO days) and the keyed-fact punctuation (`|`, a
    colon ending a word), case folded."""
    plain = _PUNCT.sub(" ", _DATED.sub(" ", normalize(text)))
    return " ".join(plain.split())


@dataclass(frozen=True)
class Verdict:
    """One fact line, judged."""

    line: FactLine
    claim: str
    kind: str  # "verbatim" | "distilled"
    grammar: str | None  # "keyed" (dated supersede), "kind" (`SUBJECT | KIND: VALUE`), None: free text
    forged: bool  # cites a locator naming no turn of the stream
    supported: bool
    junk: str | None  # junk_reason of the value
    false: str | None = None  # fact_truth's reason, for a line of the keyed or KIND grammar

    @property
    def good(self) -> bool:
        return self.supported and self.junk is None

    @property
    def strict(self) -> bool:
        """Good, and true by who, what and when (`fact_truth`)."""
        return self.good and self.false is None

    def shown(self) -> str:
        return f"{self.line.path}:{self.line.lineno}: {self.line.text.strip()}"


def judge(
    line: FactLine,
    turns: Mapping[str, Turn],
    names: Sequence[str],
    *,
    people: frozenset[str] = frozenset(),
    reference: Sequence[Observation] = (),
) -> Verdict:
    """The verdict on one fact line, given the stream's turns by locator, its speakers, the
    person names it writes (`fact_truth.stream_names`) and the reference facts of the turns the
    line cites (the best match by content F1 >= `KEPT` names its subject)."""
    cited = [turns[loc] for loc in line.locators if loc in turns]
    forged = len(cited) < len(line.locators)
    claim = claim_of(line.text)
    kf = parse_keyed(line.path, line.lineno, line.text) or parse_distilled(line.text)
    if kf is not None:
        # the attribute (or kind) is the filer's label ("job" for "I work as a nurse"): what must
        # occur in the turns is who and what, the subject and the value
        said, value = f"{kf.subject} {kf.value}", kf.value
        kind = "distilled"
    else:
        said = value = claim
        whole = (
            c for t in cited for c in (content_f1(claim, t.text), content_f1(claim, f"{t.speaker} {t.text}"))
        )
        kind = "verbatim" if any(f >= VERBATIM for f in whole) else "distilled"
    sources = [t.text for t in cited] + list(names)
    supported = not forged and is_supported(said, sources, SUPPORTED)
    junk = junk_reason(value, whole=kf is None)
    grammar = "keyed" if isinstance(kf, KeyedFact) else "kind" if kf is not None else None
    false = None
    if kf is not None and not forged:
        false = _false(kf, claim, cited, names, people, reference)
    return Verdict(line, claim, kind, grammar, forged, supported, junk, false)


def _false(
    kf: KeyedFact | DistilledFact,
    claim: str,
    cited: Sequence[Turn],
    names: Sequence[str],
    people: frozenset[str],
    reference: Sequence[Observation],
) -> str | None:
    matched = max(reference, key=lambda o: content_f1(claim, o.text), default=None)
    near = matched is not None and content_f1(claim, matched.text) >= KEPT
    ref = reference_subject(matched.text, matched.speaker, people) if matched and near else None
    if ref is not None and not reference_fits(kf.subject, kf.value, ref):
        return "wrong subject"
    return false_reason(line_of(kf), cited, names, names=people, subject_known=ref is not None)


def store_fact_lines(store: Store) -> list[FactLine]:
    """Every fact line of every markdown file of the store, in path order."""
    found: list[FactLine] = []
    for entry in store.files():
        found.extend(fact_lines(entry.path.text, store.read_text(entry.path)))
    return found


@dataclass
class WriteScore:
    """Counts, so scores of several stores add up (pooled figures are ratios of sums)."""

    lines: Counter[str] = field(default_factory=Counter)  # group -> fact lines
    good: Counter[str] = field(default_factory=Counter)  # group -> supported and not junk
    supported: Counter[str] = field(default_factory=Counter)
    forged: int = 0
    keyed: int = 0  # lines of the keyed grammar (dated supersede)
    kind_lines: int = 0  # lines of the distilled-line grammar, `- DATE: SUBJECT | KIND: VALUE [LOC]`
    junk: Counter[str] = field(default_factory=Counter)  # reason -> distilled lines
    observations: int = 0  # reference facts scored against (0: no reference, recall undefined)
    kept: Counter[str] = field(default_factory=Counter)  # group -> observations kept
    examples: dict[str, list[str]] = field(default_factory=dict)  # "junk" / "unsupported" / "false" -> lines
    strict: Counter[str] = field(default_factory=Counter)  # group -> good and not false
    false: Counter[str] = field(default_factory=Counter)  # fact_truth reason -> lines

    @property
    def junk_lines(self) -> int:
        return sum(self.junk.values())

    def recall(self, group: str) -> float | None:
        return self.kept[group] / self.observations if self.observations else None

    def precision(self, group: str) -> float | None:
        return self.good[group] / self.lines[group] if self.lines[group] else None

    def strict_precision(self, group: str) -> float | None:
        return self.strict[group] / self.lines[group] if self.lines[group] else None

    def junk_rate(self) -> float | None:
        return self.junk_lines / self.lines["distilled"] if self.lines["distilled"] else None

    def __add__(self, other: WriteScore) -> WriteScore:
        examples = {
            k: self.examples.get(k, []) + other.examples.get(k, []) for k in {*self.examples, *other.examples}
        }
        return WriteScore(
            self.lines + other.lines,
            self.good + other.good,
            self.supported + other.supported,
            self.forged + other.forged,
            self.keyed + other.keyed,
            self.kind_lines + other.kind_lines,
            self.junk + other.junk,
            self.observations + other.observations,
            self.kept + other.kept,
            examples,
            self.strict + other.strict,
            self.false + other.false,
        )

    def as_json(self) -> JsonObject:
        """Counts and the ratios derived from them (None where a ratio has no denominator)."""
        return {
            "fact_lines": {g: self.lines[g] for g in GROUPS},
            "good_lines": {g: self.good[g] for g in GROUPS},
            "supported_lines": {g: self.supported[g] for g in GROUPS},
            "forged_lines": self.forged,
            "keyed_lines": self.keyed,
            "kind_lines": self.kind_lines,
            "junk_lines": self.junk_lines,
            "junk_reasons": dict(sorted(self.junk.items())),
            "junk_rate": _round(self.junk_rate()),
            "precision": {g: _round(self.precision(g)) for g in GROUPS},
            "strict_good_lines": {g: self.strict[g] for g in GROUPS},
            "false_lines": {r: self.false[r] for r in REASONS},
            "false_line_count": sum(self.false.values()),
            "precision_strict": {g: _round(self.strict_precision(g)) for g in GROUPS},
            "observations": self.observations,
            "kept": {g: self.kept[g] for g in (*GROUPS, "distilled_strict")},
            "recall": {g: _round(self.recall(g)) for g in GROUPS},
            "recall_distilled_strict": _round(self.recall("distilled_strict")),
            "examples": self.examples,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, JsonValue]) -> WriteScore:
        """`as_json` read back; a count an older record lacks reads as 0."""
        return cls(
            Counter(counts(d.get("fact_lines"))),
            Counter(counts(d.get("good_lines"))),
            Counter(counts(d.get("supported_lines"))),
            count(d.get("forged_lines")),
            count(d.get("keyed_lines")),
            count(d.get("kind_lines")),
            Counter(counts(d.get("junk_reasons"))),
            count(d.get("observations")),
            Counter(counts(d.get("kept"))),
            {k: [str(x) for x in array(v)] for k, v in obj(d.get("examples")).items()},
            Counter(counts(d.get("strict_good_lines"))),
            Counter({k: v for k, v in counts(d.get("false_lines")).items() if v}),
        )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def score(
    lines: Iterable[FactLine],
    turns: Iterable[Turn],
    observations: Sequence[Observation] | None = None,
    speakers: Sequence[str] = (),
) -> WriteScore:
    """Score a store's fact lines against the stream it was built from and, when given, the
    reference facts (None: no reference, recall is left undefined)."""
    by_loc = {t.locator: t for t in turns}
    names = sorted({*speakers, *(t.speaker for t in by_loc.values())})
    people = stream_names(list(by_loc.values()))
    refs: dict[str, list[Observation]] = {}
    for obs in observations or ():
        for loc in obs.evidence:
            refs.setdefault(loc, []).append(obs)
    verdicts = [
        judge(
            line,
            by_loc,
            names,
            people=people,
            reference=[o for loc in line.locators for o in refs.get(loc, ())],
        )
        for line in lines
    ]
    out = WriteScore(examples={"junk": [], "unsupported": [], "false": []})
    citing: dict[str, list[Verdict]] = {}
    for v in verdicts:
        for group in ("all", v.kind):
            out.lines[group] += 1
            out.good[group] += v.good
            out.supported[group] += v.supported
            out.strict[group] += v.strict
        if v.false is not None:
            out.false[v.false] += 1
            _example(out.examples["false"], f"{v.false}: {v.shown()}")
        out.forged += v.forged
        out.keyed += v.grammar == "keyed"
        out.kind_lines += v.grammar == "kind"
        if v.kind == "distilled" and v.junk is not None:
            out.junk[v.junk] += 1
            _example(out.examples["junk"], f"{v.junk}: {v.shown()}")
        if not v.supported:
            _example(out.examples["unsupported"], ("forged: " if v.forged else "") + v.shown())
        for loc in v.line.locators:
            citing.setdefault(loc, []).append(v)
    for obs in observations or ():
        out.observations += 1
        near = {id(v): v for loc in obs.evidence for v in citing.get(loc, ())}.values()
        matched = [v for v in near if content_f1(v.claim, obs.text) >= KEPT]
        hits = {v.kind for v in matched}
        for group in ("distilled", "verbatim"):
            out.kept[group] += group in hits
        out.kept["distilled_strict"] += any(v.kind == "distilled" and v.strict for v in matched)
        out.kept["all"] += bool(hits)
    return out


def _example(found: list[str], text: str) -> None:
    if len(found) < EXAMPLES:
        found.append(text)
