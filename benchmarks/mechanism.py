"""The mechanism model of the store, reproduced with memdir's own tools on real files.

The design rules of docs/study.md (1-5) come from a mechanism model of the store. This script
rebuilds that model on the generated benchmark, so the rules are checked against memdir's
tools and meter instead of being quoted. Per corpus size it writes three stores in temp dirs:

- `verbatim-dump`: `memdir_study.variants.dump.write_dump`, searched by scan: the root listing, then
  `view` of every session file. Its answer is parsed from the turns with the benchmark's own
  phrasings, so the scan finds everything there is (an upper bound on what a scan answers).
- `sharded`, routed by (subject, attribute): `/memories/people/<subject>/<attribute>.md`, one
  file per key holding its keyed lines in the conventions' dated-supersede form (live line
  first, struck-through history below). Every other turn (restatements, replies, small talk) is
  filed by speaker and year in `people/<subject>/log-<year>.md`.
- `consolidated`, routed by topic, the subject (the offline curator's layout before issue 20):
  `/memories/people/<subject>.md`, the subject's keyed lines and their log in one file.

The curated stores are written from the benchmark's ground truth (`Sample.facts`): a perfect
curator, so the two differ by layout alone and hold the same lines. Their reader is
deterministic: it takes the key from the question, views the one file the layout routes the key
to and answers from the keyed lines there; when the answer is not there (a miss) it falls back to
a sweep (the root listing, then every file). Every byte is the harness's own meter: a fresh
`search` Harness per question, `Meter.bytes_read` (what `view` read; listings and grep add
nothing to it) beside `bytes_returned` (what the tools handed back).

Why one file per key, not a section per attribute: `toc` and `section_read` meter the whole file
they open, so a section costs its file's bytes; only a file boundary shrinks what is counted.

The three other results of the model, each on the same sizes:
- chronology (rule 5): destructive, undated updates (one `(since unknown)` line per key,
  overwritten in place) against dated supersede, on "what was it before" and "when did it change";
- condensation (rule 4): the sharded store condensed silently (struck-through history merged
  into the live line, yearly logs merged into one with greetings and replies dropped): smaller,
  and costlier to read, since each miss falls back to a sweep;
- misfiling (rule 3): a router that files the last change of some keys under the other speaker
  of that session; the stale line in the routed file stands as live, so current values come back
  confidently wrong, with no miss, from smaller files. `memdir check` (supersede) names each one.
  (A "before" question on a two-value history does miss: nothing is struck in the routed file,
  and its sweep makes the all-question reads costlier.)

Sizes: the generated benchmark at its defaults with 10 / 40 / 160 sessions, the cost curve's
sizes (the dump is 6.9 / 25.6 / 105.9 KB). The seed's model ran at 1.7 / 6.8 / 27.6 KB, which
this generator cannot reach at the small end (2 sessions already make 2.3 KB), so the tables set
the seed's figures beside ours by rank (1x / 4x / 16x), not by size. As the generator grows, the
new material is small talk: a key's history stays bounded (at most `max_changes` changes), so
what a key's file holds does not grow with the corpus.

    python benchmarks/mechanism.py [--sizes 10,40,160] [--out runs/mechanism] [--tmp DIR] [--quick]
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import REPO, bar_chart, machine, table, write_json
from rich.console import Console

from memdir.agents.dump_format import turn_line
from memdir.analytics.integrity import check
from memdir.conventions import key_of, keyed_facts
from memdir.store import frontmatter
from memdir.store.store import Store
from memdir.stream import Turn
from memdir.tools.profiles import Harness
from memdir_study.bench.generated import ATTRIBUTES, REPLIES, generate
from memdir_study.bench.types import Fact, Question, Sample
from memdir_study.variants.dump import write_dump

SIZES = (10, 40, 160)
QUICK_SIZES = (10, 40)
# The seed's mechanism model (issue 20), by rank 1x / 4x / 16x.
SEED: dict[str, Any] = {
    "corpus_kb": (1.7, 6.8, 27.6),
    "saving": {"sharded": (0.837, 0.941, 0.967), "consolidated": (0.52, 0.52, 0.52)},
    "growth": {"verbatim-dump": 16.0, "sharded": 3.4, "consolidated": 15.6},
}
STORES = ("verbatim-dump", "sharded", "consolidated")
MISFILE_RATES = (0.0, 0.25, 0.5)

Key = tuple[str, str]  # (subject, attribute) as the benchmark spells them
Files = dict[str, tuple[str, list[str]]]  # memory path -> (description, body lines)


def slug(text: str) -> str:
    return "-".join(text.lower().split())


def route_sharded(subject: str, attribute: str) -> str:
    return f"/memories/people/{slug(subject)}/{slug(attribute)}.md"


def route_consolidated(subject: str, attribute: str) -> str:
    return f"/memories/people/{slug(subject)}.md"


# -- the material: keyed lines from the ground truth, every other turn as a dated event ---------
def histories(sample: Sample) -> dict[Key, list[Fact]]:
    """Each key's values in the order they held (the benchmark lists them so)."""
    out: dict[Key, list[Fact]] = {}
    for f in sample.facts:
        out.setdefault((f.subject, f.attribute), []).append(f)
    return out


def keyed_lines(facts: list[Fact], *, dated: bool = True, history: bool = True) -> list[str]:
    """The key's lines, newest first. Dated: the last value live `(since DATE)`, each earlier one
    struck through `(FROM until DATE)`, where DATE is when the next value began. Undated: the last
    value alone, `(since unknown)`: what an update that overwrites in place leaves."""
    if not facts:
        return []
    who, what = facts[0].subject.lower(), facts[0].attribute
    last = facts[-1]
    if not dated:
        return [f"- {who} | {what}: {last.value} (since unknown) [{last.locator}]"]
    lines = [f"- {who} | {what}: {last.value} (since {last.since}) [{last.locator}]"]
    if history:
        for old, new in zip(reversed(facts[:-1]), reversed(facts[1:]), strict=True):
            lines.append(f"- ~~{who} | {what}: {old.value}~~ ({old.since} until {new.since}) [{old.locator}]")
    return lines


def event_turns(sample: Sample) -> list[Turn]:
    """The turns no keyed line stands for: restatements, replies, greetings, small talk."""
    keyed = {f.locator for f in sample.facts}
    return [t for t in sample.turns if t.locator not in keyed]


_GREETING = re.compile(r"^Hi \w+, good to talk again!$")


def pleasantry(turn: Turn) -> bool:
    return turn.text in REPLIES or bool(_GREETING.match(turn.text))


def partner(sample: Sample, locator: str, subject: str) -> str:
    """The other speaker of the session `locator` is in."""
    session = locator[: locator.index("T")]
    return next(
        t.speaker for t in sample.turns if t.locator.startswith(session + "T") and t.speaker != subject
    )


def misfiled_keys(sample: Sample, rate: float) -> frozenset[Key]:
    """Every 1/rate-th key that changed at least once (in a fixed order): the keys a misfiling
    router sends the last change of elsewhere."""
    if rate <= 0:
        return frozenset()
    changed = sorted(k for k, facts in histories(sample).items() if len(facts) > 1)
    step = max(1, round(1 / rate))
    return frozenset(changed[::step])


def sharded_files(
    sample: Sample, *, dated: bool = True, condensed: bool = False, misfiled: frozenset[Key] = frozenset()
) -> Files:
    files: Files = {}

    def add(path: str, desc: str, head: str, lines: list[str]) -> None:
        files.setdefault(path, (desc, [head]))[1].extend(lines)

    for (subject, attribute), facts in histories(sample).items():
        kept = facts[:-1] if (subject, attribute) in misfiled else facts
        add(
            route_sharded(subject, attribute),
            f"{subject}'s {attribute}: the current value and its history",
            f"# {subject}: {attribute}",
            keyed_lines(kept, dated=dated, history=not condensed),
        )
        if (subject, attribute) in misfiled:  # the last change, filed under the other speaker
            other = partner(sample, facts[-1].locator, subject)
            add(
                route_sharded(other, attribute),
                f"{other}'s {attribute}: the current value and its history",
                f"# {other}: {attribute}",
                keyed_lines([facts[-1]], dated=dated),
            )
    for turn in event_turns(sample):
        if condensed and pleasantry(turn):
            continue
        year = "" if condensed else "-" + (turn.date or "unknown")[:4]
        add(
            f"/memories/people/{slug(turn.speaker)}/log{year}.md",
            f"What {turn.speaker} said" + (f" in {year[1:]}" if year else "") + ", dated",
            f"# {turn.speaker}: log{year}",
            [turn_line(turn)],
        )
    return files


def consolidated_files(sample: Sample) -> Files:
    files: Files = {}
    for (subject, _), facts in histories(sample).items():
        path = route_consolidated(subject, "")
        desc = f"{subject}: preferences and plans (dated supersede) and what {subject} said"
        files.setdefault(path, (desc, [f"# {subject}", "## Facts"]))[1].extend(keyed_lines(facts))
    for body in (b for _, b in files.values()):
        body.append("## Log")
    for turn in event_turns(sample):
        desc = f"{turn.speaker}: what {turn.speaker} said"
        files.setdefault(route_consolidated(turn.speaker, ""), (desc, [f"# {turn.speaker}", "## Log"]))
        files[route_consolidated(turn.speaker, "")][1].append(turn_line(turn))
    return files


def write_tree(root: Path, files: Files) -> Store:
    """`files` written in one step of a bare Store (no index or journal: nothing here reads
    them), with a MEMORY.md in every folder listing its entries."""
    store = Store(root, create=True)
    folders: dict[str, set[str]] = {"/memories": set()}
    for path in files:
        parts = path.split("/")[2:]
        for k in range(len(parts)):
            folder = "/".join(["/memories", *parts[:k]])
            folders.setdefault(folder, set()).add(parts[k] + ("/" if k < len(parts) - 1 else ""))
    with store.step("mechanism", role="builder"):
        for path, (desc, body) in files.items():
            stem = path.rsplit("/", 1)[1].removesuffix(".md")
            store.create(path, frontmatter.dump(stem, desc) + "\n".join(body) + "\n")
        for folder, children in folders.items():
            listing = "\n".join(f"- {c}" for c in sorted(children))
            store.create(
                f"{folder}/MEMORY.md", frontmatter.dump("memory", f"Index of {folder}") + listing + "\n"
            )
    return store


def build_dump(root: Path, sample: Sample) -> Store:
    store = Store(root, create=True)
    write_dump(store, sample)
    return store


def store_bytes(store: Store) -> int:
    return sum(e.size for e in store.files())


# -- readers ---------------------------------------------------------------------------------
_QUESTION = re.compile(
    r"(?:What is|What was|did) (?P<subject>.+?)'s (?:current )?(?P<attribute>.+?)(?: before| last|\?)"
)
_LISTED = re.compile(r"\t(/memories/\S+?\.md)(?=\s|$)", re.M)
_TURN_LINE = re.compile(
    r"^- (?:(?P<date>\d{4}-\d{2}-\d{2}): )?(?P<speaker>[^:]+): (?P<text>.*) \[(?P<loc>S\d+T\d+)\]$"
)
_SESSION_HEADING = re.compile(r"^# Session \d+ \((?P<date>\d{4}-\d{2}-\d{2})\)$")  # the dump's


def question_key(q: Question) -> Key:
    m = _QUESTION.search(q.question)
    if not m:
        raise ValueError(f"no subject and attribute in {q.question!r}")
    return m["subject"], m["attribute"]


def shown_lines(view_text: str) -> list[str]:
    """The file's lines as `view` numbered them (its first line is the header)."""
    return [ln.split("\t", 1)[1] for ln in view_text.split("\n")[1:] if "\t" in ln]


@dataclass
class Reading:
    """One question read from one store: the answer and what the meter counted."""

    qid: str
    category: str
    gold: str
    answer: str | None
    bytes_read: int
    bytes_returned: int
    calls: int
    missed: bool  # the routed read held no answer
    swept: bool
    evidence_seen: bool

    @property
    def right(self) -> bool:
        return self.answer is not None and self.answer.casefold() == self.gold.casefold()


def sweep(h: Harness) -> list[str]:
    """The root listing, then `view` of every file in it but the indexes."""
    listing = h.call("view", {"path": "/memories"}).text
    paths = [p for p in _LISTED.findall(listing) if not p.endswith("/MEMORY.md")]
    return [h.call("view", {"path": p}).text for p in paths]


def answer_keyed(texts: Iterable[str], key: Key, category: str) -> str | None:
    """From keyed lines: current = the latest live value; previous = the value struck through
    last; changed-when = the date the live value began. None when the lines do not say."""
    wanted = key_of(*key)
    facts = [f for t in texts for f in keyed_facts("", "\n".join(shown_lines(t))) if f.key == wanted]
    live = sorted((f for f in facts if f.live), key=lambda f: f.since)
    struck = sorted((f for f in facts if not f.live), key=lambda f: f.until or "")
    if category == "current":
        return live[-1].value if live else None
    if category == "previous":
        return struck[-1].value if struck else None
    if category == "changed-when":
        return live[-1].since if live and live[-1].since != "unknown" else None
    raise ValueError(category)


def _template(fmt: str) -> re.Pattern[str]:
    head, tail = fmt.split("{v}")
    return re.compile(re.escape(head) + "(?P<v>.+)" + re.escape(tail) + "$")


PHRASINGS = {
    a.name: ([_template(getattr(a, k)) for k in ("state", "repeat", "change")], a.values) for a in ATTRIBUTES
}


def answer_turns(texts: Iterable[str], key: Key, category: str) -> str | None:
    """From dated turns (the dump): every time the subject stated the attribute, in order; the
    last run of one value is the current one, the value before it the previous one, and the
    date that run began the date of the change."""
    subject, attribute = key
    patterns, values = PHRASINGS[attribute]
    said: list[tuple[str, str]] = []
    for text in texts:
        session_date = ""  # the dump dates a turn by its session's heading, unless its line says
        for line in shown_lines(text):
            if h := _SESSION_HEADING.match(line):
                session_date = h["date"]
            m = _TURN_LINE.match(line)
            if not m or m["speaker"] != subject:
                continue
            for p in patterns:
                v = p.match(m["text"])
                if v and v["v"] in values:
                    said.append((m["date"] or session_date, v["v"]))
                    break
    if not said:
        return None
    i = len(said) - 1
    while i > 0 and said[i - 1][1] == said[-1][1]:
        i -= 1
    if category == "current":
        return said[-1][1]
    if category == "previous":
        return said[i - 1][1] if i > 0 else None
    if category == "changed-when":
        return said[i][0] if i > 0 else None
    raise ValueError(category)


Reader = Callable[[Store, Question], Reading]


def _reading(
    q: Question, h: Harness, answer: str | None, texts: list[str], missed: bool, swept: bool
) -> Reading:
    seen = any(re.search(rf"\b{re.escape(loc)}\b", t) for t in texts for loc in q.evidence)
    m = h.meter
    return Reading(
        q.id, q.category, q.gold, answer, m.bytes_read, m.bytes_returned, m.calls, missed, swept, seen
    )


def routed_reader(route: Callable[[str, str], str]) -> Reader:
    """Read the file the layout routes the key to; on a miss, sweep the store."""

    def read(store: Store, q: Question) -> Reading:
        h = Harness(store, "search")
        key = question_key(q)
        res = h.call("view", {"path": route(*key)})
        texts = [] if res.is_error else [res.text]
        answer = answer_keyed(texts, key, q.category)
        missed = answer is None
        if missed:
            texts += sweep(h)
            answer = answer_keyed(texts, key, q.category)
        return _reading(q, h, answer, texts, missed, missed)

    return read


def scan_reader(store: Store, q: Question) -> Reading:
    """The dump: read every session, answer from the turns."""
    h = Harness(store, "search")
    texts = sweep(h)
    return _reading(q, h, answer_turns(texts, question_key(q), q.category), texts, False, True)


READERS: dict[str, Reader] = {
    "verbatim-dump": scan_reader,
    "sharded": routed_reader(route_sharded),
    "consolidated": routed_reader(route_consolidated),
}


def read_all(store: Store, questions: Iterable[Question], reader: Reader) -> list[Reading]:
    return [reader(store, q) for q in questions]


def summary(readings: list[Reading], store: Store | None = None) -> dict[str, Any]:
    n = len(readings)
    out: dict[str, Any] = {
        "questions": n,
        "right": sum(r.right for r in readings),
        "wrong": sum(r.answer is not None and not r.right for r in readings),
        "unknown": sum(r.answer is None for r in readings),
        "misses": sum(r.missed for r in readings),
        "sweeps": sum(r.swept for r in readings),
        "evidence_seen": sum(r.evidence_seen for r in readings),
        "bytes_read_per_q": sum(r.bytes_read for r in readings) / max(1, n),
        "bytes_returned_per_q": sum(r.bytes_returned for r in readings) / max(1, n),
        "calls_per_q": sum(r.calls for r in readings) / max(1, n),
    }
    if store is not None:
        out["store_bytes"] = store_bytes(store)
        out["files"] = len(store.files())
    return out


# -- the experiments -------------------------------------------------------------------------
def sample_for(sessions: int) -> Sample:
    return generate(sessions=sessions)


def scaling(sample: Sample, tmp: Path) -> dict[str, Any]:
    """Result 1: bytes read per question by layout, and the saving against the dump."""
    stores = {
        "verbatim-dump": build_dump(tmp / "dump", sample),
        "sharded": write_tree(tmp / "sharded", sharded_files(sample)),
        "consolidated": write_tree(tmp / "consolidated", consolidated_files(sample)),
    }
    out = {
        name: summary(read_all(stores[name], sample.questions, READERS[name]), stores[name])
        for name in STORES
    }
    dump_q = out["verbatim-dump"]["bytes_read_per_q"]
    for name in STORES:
        out[name]["saving"] = 1 - out[name]["bytes_read_per_q"] / dump_q
    return out


def chronology(sample: Sample, tmp: Path) -> dict[str, Any]:
    """Result 2: dated supersede against destructive, undated updates, per question category."""
    out: dict[str, Any] = {}
    for name, dated in (("dated supersede", True), ("undated, destructive", False)):
        store = write_tree(tmp / slug(name.split(",")[0]), sharded_files(sample, dated=dated))
        readings = read_all(store, sample.questions, READERS["sharded"])
        out[name] = {cat: summary([r for r in readings if r.category == cat]) for cat in sample.categories()}
    return out


def condensation(sample: Sample, tmp: Path) -> dict[str, Any]:
    """Result 3: the sharded store kept whole against the same store condensed silently."""
    out: dict[str, Any] = {}
    for name, condensed in (("preserved", False), ("condensed", True)):
        store = write_tree(tmp / name, sharded_files(sample, condensed=condensed))
        out[name] = summary(read_all(store, sample.questions, READERS["sharded"]), store)
    return out


def misfiling(sample: Sample, tmp: Path, rates: Iterable[float] = MISFILE_RATES) -> dict[str, Any]:
    """Result 4: a router that files the last change of some keys under the wrong subject."""
    out: dict[str, Any] = {}
    for rate in rates:
        bad = misfiled_keys(sample, rate)
        store = write_tree(tmp / f"misfile-{rate}", sharded_files(sample, misfiled=bad))
        readings = read_all(store, sample.questions, READERS["sharded"])
        problems = [p for p in check(store).problems if p.rule == "supersede"]
        out[f"{rate:.2f}"] = {
            "misfiled_keys": len(bad),
            "current": summary([r for r in readings if r.category == "current"]),
            "all": summary(readings),
            "check_supersede_problems": len(problems),
        }
    return out


def run_size(sessions: int, tmp: Path) -> dict[str, Any]:
    sample = sample_for(sessions)
    t0 = time.perf_counter()
    out: dict[str, Any] = {
        "sessions": sessions,
        "sample": sample.id,
        "turns": len(sample.turns),
        "questions": len(sample.questions),
        "categories": sample.categories(),
        "scaling": scaling(sample, tmp / "scaling"),
        "chronology": chronology(sample, tmp / "chronology"),
        "condensation": condensation(sample, tmp / "condensation"),
        "misfiling": misfiling(sample, tmp / "misfiling"),
    }
    out["corpus_bytes"] = out["scaling"]["verbatim-dump"]["bytes_read_per_q"]
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def growth(sizes: list[dict[str, Any]], store: str) -> float:
    first, last = sizes[0]["scaling"][store], sizes[-1]["scaling"][store]
    return float(last["bytes_read_per_q"] / first["bytes_read_per_q"])


# -- output ----------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _seed(kind: str, store: str, rank: int) -> str:
    if rank >= 3:
        return "—"
    if kind == "kb":
        return f"{SEED['corpus_kb'][rank]:.1f}"
    seed = SEED["saving"].get(store)
    if seed is None:
        return "0.0%"
    return ("~" if store == "consolidated" else "") + _pct(seed[rank])


def render(result: dict[str, Any], console: Console) -> None:
    sizes = result["sizes"]
    rows: list[tuple[str, ...]] = []
    for name in STORES:
        for rank, s in enumerate(sizes):
            r = s["scaling"][name]
            rows.append(
                (
                    name,
                    f"{s['sessions']}",
                    f"{s['corpus_bytes'] / 1024:.1f}",
                    _seed("kb", name, rank),
                    f"{r['bytes_read_per_q']:,.0f}",
                    f"{r['bytes_returned_per_q']:,.0f}",
                    _pct(r["saving"]),
                    _seed("saving", name, rank),
                    f"{r['right']}/{r['questions']}",
                    f"{r['misses']}",
                )
            )
    cols: tuple[str, ...] = (
        "store",
        "sessions",
        "corpus KB",
        "seed KB",
        "B read/q",
        "B returned/q",
        "saving",
    )
    console.print(
        table("Bytes read per question, by layout", (*cols, "seed saving", "right", "misses"), rows)
    )
    corpus = sizes[-1]["corpus_bytes"] / sizes[0]["corpus_bytes"]
    rows = [
        (name, f"{growth(sizes, name):.1f}x", f"{corpus:.1f}x", f"{SEED['growth'][name]:.1f}x", "16x")
        for name in STORES
    ]
    cols = ("store", "B read/q growth", "corpus growth", "seed B/q growth", "seed corpus growth")
    console.print(table(f"Growth, {sizes[0]['sessions']} -> {sizes[-1]['sessions']} sessions", cols, rows))

    rows = []
    for s in sizes:
        for name, cats in s["chronology"].items():
            for cat, r in cats.items():
                rows.append(
                    (f"{s['sessions']}", name, cat, f"{r['right']}/{r['questions']}", f"{r['misses']}")
                )
    cols = ("sessions", "sharded store", "question", "right", "misses (swept)")
    console.print(table("Chronology: dated supersede against destructive, undated updates", cols, rows))

    rows = []
    for s in sizes:
        for name, r in s["condensation"].items():
            rows.append(
                (
                    f"{s['sessions']}",
                    name,
                    f"{r['store_bytes'] / 1024:.1f}",
                    f"{r['files']}",
                    f"{r['bytes_read_per_q']:,.0f}",
                    f"{r['misses']}",
                    f"{r['right']}/{r['questions']}",
                )
            )
    cols = ("sessions", "sharded store", "store KB", "files", "B read/q", "misses (swept)", "right")
    console.print(table("Condensation: the sharded store kept whole, and condensed silently", cols, rows))

    rows = []
    for s in sizes:
        for rate, r in s["misfiling"].items():
            c, a = r["current"], r["all"]
            rows.append(
                (
                    f"{s['sessions']}",
                    rate,
                    f"{r['misfiled_keys']}",
                    f"{c['bytes_read_per_q']:,.0f}",
                    f"{c['right']}/{c['questions']}",
                    f"{c['wrong']}",
                    f"{c['misses']}",
                    f"{a['bytes_read_per_q']:,.0f}",
                    f"{a['right']}/{a['questions']}",
                    f"{a['misses']}",
                    f"{r['check_supersede_problems']}",
                )
            )
    cols = ("sessions", "misfile rate", "keys misfiled", "current: B read/q", "right", "wrong", "misses")
    cols += ("all: B read/q", "right", "misses", "check: supersede")
    console.print(table("Misfiling router: some keys' last change filed under the other speaker", cols, rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="sessions per size, smallest first")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "mechanism")
    ap.add_argument("--tmp", default=None, help="where the stores are written (default: the system temp dir)")
    ap.add_argument("--quick", action="store_true", help=f"sizes {','.join(map(str, QUICK_SIZES))}")
    args = ap.parse_args()
    sessions = list(QUICK_SIZES) if args.quick else [int(x) for x in args.sizes.split(",")]
    console = Console()
    t0 = time.perf_counter()
    sizes = []
    for n in sessions:
        with tempfile.TemporaryDirectory(dir=args.tmp, prefix="memdir-mechanism-") as tmp:
            sizes.append(run_size(n, Path(tmp)))
        console.print(f"{n} sessions: {sizes[-1]['seconds']:.1f} s")
    result = {
        "what": "the mechanism model on the generated benchmark (benchmarks/mechanism.py)",
        "seed": SEED,
        "sizes": sizes,
        "growth": {name: growth(sizes, name) for name in STORES},
        "seconds": round(time.perf_counter() - t0, 2),
        "machine": machine(),
    }
    render(result, console)
    write_json(args.out / "mechanism.json", result)
    labels = [f"{s['sessions']} sessions, {s['corpus_bytes'] / 1024:.1f} KB" for s in sizes]
    series = {name: [s["scaling"][name]["bytes_read_per_q"] for s in sizes] for name in STORES}
    bar_chart(
        args.out / "mechanism.png", "Bytes read per question against corpus size", labels, series, "bytes"
    )
    console.print(f"{result['seconds']:.1f} s; JSON and plot in {args.out}")


if __name__ == "__main__":
    main()
