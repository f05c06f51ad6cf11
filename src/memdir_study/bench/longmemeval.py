"""LongMemEval (Wu et al., ICLR 2025): 500 questions, each over its own user-assistant history.

Each item of `longmemeval_s.json` (~40 sessions, ~115k tokens) or `longmemeval_oracle.json`
(the evidence sessions only) is its own haystack, so one item is one `Sample` holding one
question. A sample id is the `question_id` for the `_s` file and `oracle:<question_id>` for the
oracle file, so `load(sample.id)` returns the same sample and run records of the two files
never share an id. The files are hundreds of MB and are never downloaded here: put them under
`$MEMDIR_DATA/longmemeval/` (a missing file is a `DataUnavailable` saying where and from where).

Session k (1-based, in haystack order, which upstream sorts by time in `_s` but not in the
oracle file) turn t is `S{k}T{t}`; speaker is the role, the date is the session's
`2023/05/20 (Sat) 02:21` cut to ISO `2023-05-20` (None when it has no valid Y/M/D start).
`Sample.session_ids` maps k to the official session id. Evidence is, per answer session, the
turns flagged `has_answer: true`, or every turn of it when none is flagged: so every answer
session is cited and `answer_sessions` (the session-level gold, as upstream scores it) is
exactly the sessions the evidence names. Abstention items (`_abs`) keep their `question_type`;
upstream's retrieval scores skip them, since they cite nothing that answers. The question's
own `question_date` is `Question.date` (ISO), which temporal questions need.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, JsonValue
from memdir.stream import Turn
from memdir_study.bench.data import DataUnavailable, UnknownSample, cache_root, data_root
from memdir_study.bench.types import Question, Sample

BENCHMARK = "longmemeval"
FILES: dict[str, tuple[str, ...]] = {
    "s": ("longmemeval_s.json", "longmemeval_s_cleaned.json"),
    "oracle": ("longmemeval_oracle.json",),
}
"""Variant -> accepted file names under `longmemeval/`, the first found wins."""
SOURCE = (
    "https://huggingface.co/datasets/xiaowu0162/longmemeval (cleaned release: "
    "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned; code: github.com/xiaowu0162/LongMemEval)"
)
LISTS = ("haystack_sessions", "haystack_session_ids", "haystack_dates", "answer_session_ids")
REQUIRED = ("question_id", "question_type", "question", "answer", *LISTS)
_YMD = re.compile(r"\s*(\d{4})[/-](\d{1,2})[/-](\d{1,2})\b")


def iso_date(stamp: object) -> str | None:
    """`"2023/05/20 (Sat) 02:21"` -> `"2023-05-20"`: the leading Y/M/D (`/` or `-`), else None."""
    m = _YMD.match(stamp) if isinstance(stamp, str) else None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat() if m else None
    except ValueError:
        return None


def parse_id(sample_id: str) -> tuple[str, str]:
    """`"e47becba"` -> ("s", "e47becba"); `"oracle:e47becba"` -> ("oracle", "e47becba")."""
    variant, sep, qid = sample_id.partition(":")
    if not sep:
        variant, qid = "s", sample_id
    if variant not in FILES or not qid:
        raise UnknownSample(
            f"{sample_id!r} is not a LongMemEval sample id; write <question_id> (longmemeval_s.json) "
            "or oracle:<question_id> (longmemeval_oracle.json)"
        )
    return variant, qid


def data_file(variant: str = "s") -> Path:
    """The file of `variant` under MEMDIR_DATA (then the cache); a clear DataUnavailable if absent."""
    if variant not in FILES:
        raise UnknownSample(f"LongMemEval has no variant {variant!r}; choose one of {', '.join(FILES)}")
    names = FILES[variant]
    for base in (data_root(), cache_root() / "data"):
        for name in names:
            if (base / BENCHMARK / name).is_file():
                return base / BENCHMARK / name
    alias = f" ({' or '.join(names[1:])} is accepted too)" if len(names) > 1 else ""
    raise DataUnavailable(
        f"LongMemEval file {names[0]} is missing: put it at {data_root() / BENCHMARK / names[0]}{alias}, "
        f"e.g. $MEMDIR_DATA/{BENCHMARK}/{names[0]}, or point MEMDIR_DATA at a folder that has it. "
        f"It is hundreds of MB, so memdir does not download it; get it from {SOURCE}"
    )


def raw_items(variant: str = "s") -> list[JsonObject]:
    """The file's items as parsed JSON (a list of objects), or a MemdirError naming the file."""
    where = data_file(variant)
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MemdirError(f"{where} is not readable JSON ({exc}); fetch it again from {SOURCE}") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise MemdirError(f"{where} is not a JSON list of objects, as the official LongMemEval files are")
    return data


def question_ids(variant: str = "s") -> list[str]:
    """The question ids of a file, in file order (the sample ids, before any `oracle:` prefix)."""
    return [str(item.get("question_id")) for item in raw_items(variant)]


def load(sample_id: str) -> Sample:
    """One item by `question_id` (`_s` file) or `oracle:<question_id>` (oracle file)."""
    variant, qid = parse_id(sample_id)
    items = raw_items(variant)
    for item in items:
        if item.get("question_id") == qid:
            return from_raw(item, variant=variant)
    some = ", ".join(str(item.get("question_id")) for item in items[:5])
    raise UnknownSample(
        f"{data_file(variant).name} has no question {qid!r}; it has {len(items)} ({some}, ...), "
        "listed by memdir_study.bench.longmemeval.question_ids()"
    )


def load_all(variant: str = "s") -> list[Sample]:
    """Every item of a file as a sample, in file order (the file is read and parsed once)."""
    return [from_raw(item, variant=variant) for item in raw_items(variant)]


def answer_sessions(sample: Sample) -> set[int]:
    """Session numbers of the item's `answer_session_ids`: the sessions its evidence names."""
    cited = {e for q in sample.questions for e in q.evidence}
    return {t.session for t in sample.turns if t.locator in cited}


def _malformed(qid: object, field: str, why: str) -> MemdirError:
    return MemdirError(f"LongMemEval item {qid!r}: field {field} {why}")


def _listed(raw: Mapping[str, JsonValue], name: str) -> Sequence[JsonValue]:
    value = raw[name]
    if not isinstance(value, list):
        raise _malformed(raw.get("question_id"), name, "is not a list")
    return value


def from_raw(raw: Mapping[str, JsonValue], *, variant: str = "s") -> Sample:
    """One official item as a sample; a missing field or disagreeing list is a MemdirError."""
    qid = raw.get("question_id")
    for name in REQUIRED:
        if name not in raw:
            raise _malformed(qid, name, "is missing")
    sessions, ids, stamps, answers = (_listed(raw, name) for name in LISTS)
    if not len(sessions) == len(ids) == len(stamps):
        raise _malformed(
            qid,
            "haystack_sessions",
            f"has {len(sessions)} sessions but haystack_session_ids has {len(ids)} "
            f"and haystack_dates {len(stamps)}; the three lists must agree",
        )
    answer_ids = {str(a) for a in answers}
    missing = sorted(answer_ids - {str(i) for i in ids})
    if missing:
        raise _malformed(qid, "answer_session_ids", f"names {missing}, not in haystack_session_ids")
    turns: list[Turn] = []
    evidence: list[str] = []
    dates: dict[int, str | None] = {}
    for k, (session, sid, stamp) in enumerate(zip(sessions, ids, stamps, strict=True), start=1):
        if not isinstance(session, list):
            raise _malformed(qid, f"haystack_sessions[{k - 1}]", "is not a list of turns")
        dates[k] = iso_date(stamp)
        flagged: list[str] = []
        for t, turn in enumerate(session, start=1):
            if not isinstance(turn, dict) or "role" not in turn or "content" not in turn:
                raise _malformed(qid, f"haystack_sessions[{k - 1}][{t - 1}]", "lacks role or content")
            locator = f"S{k}T{t}"
            turns.append(Turn(locator, str(turn["role"]), str(turn["content"]), dates[k]))
            if turn.get("has_answer") is True:
                flagged.append(locator)
        if str(sid) in answer_ids:
            if not session:
                raise _malformed(
                    qid, "answer_session_ids", f"names {sid!r} (session {k}), which has no turns"
                )
            evidence.extend(flagged or [f"S{k}T{t}" for t in range(1, len(session) + 1)])
    question = Question(
        id=str(qid),
        category=str(raw["question_type"]),
        question=str(raw["question"]),
        gold=str(raw["answer"]),
        evidence=tuple(evidence),
        order=1,
        date=iso_date(raw.get("question_date")),
    )
    sample_id = str(qid) if variant == "s" else f"{variant}:{qid}"
    session_ids = {k: str(sid) for k, sid in enumerate(ids, start=1)}
    speakers = ["user", "assistant"]
    return Sample(BENCHMARK, sample_id, turns, [question], dates, speakers, session_ids=session_ids)
