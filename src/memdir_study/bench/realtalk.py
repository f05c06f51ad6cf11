"""REALTALK (Lee et al., 2025): ten real 21-day chats between two people, `Chat_*.json`.

The format is close to LoCoMo's, with per-message timestamps (`DD.MM.YYYY, HH:MM:SS`), text in
`clean_text`, and messy evidence (ranges, `;` lists, typos) parsed leniently. Categories, as
REALTALK's own evaluation uses the LoCoMo scorer: 1 = multi-hop (partial F1 over
comma-separated sub-answers), 2 = temporal, 3 = commonsense (inference). A turn's date is its
own message date; a session's date is its start.

Chat_10_Fahim_Muhhamed: 20 sessions, 662 turns, 85 questions (30 / 45 / 10) and 93 build
chunks under the chunking rule of `memdir.stream`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from memdir.chatlogs.dialogues import realtalk_turns
from memdir.jsontypes import JsonValue, array, count, obj
from memdir_study.bench.data import REALTALK_URL, UnknownSample, data_root, locate
from memdir_study.bench.evidence import parse_evidence
from memdir_study.bench.types import Question, Sample

DEFAULT = "Chat_10_Fahim_Muhhamed"
CHATS = (
    "Chat_1_Emi_Elise",
    "Chat_2_Kevin_Elise",
    "Chat_3_Kevin_Paola",
    "Chat_4_Emi_Paola",
    "Chat_5_Nicolas_Nebraas",
    "Chat_6_Vanessa_Nicolas",
    "Chat_7_Nebraas_Vanessa",
    "Chat_8_Akib_Muhhamed",
    "Chat_9_Fahim_Akib",
    "Chat_10_Fahim_Muhhamed",
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
SOURCE = "github.com/danny911kr/REALTALK, data/Chat_*.json"


def sample_ids() -> list[str]:
    here = data_root() / "realtalk"
    found = {p.stem for p in here.glob("Chat_*.json")} if here.is_dir() else set()
    return sorted(found | set(CHATS), key=lambda n: int(n.split("_")[1]))


def load(sample_id: str = DEFAULT) -> Sample:
    if sample_id not in sample_ids():
        raise UnknownSample(f"REALTALK has no chat {sample_id!r}; choose one of {', '.join(sample_ids())}")
    path = locate(f"realtalk/{sample_id}.json", REALTALK_URL.format(name=sample_id), source=SOURCE)
    return from_raw(sample_id, json.loads(path.read_text(encoding="utf-8")))


def from_raw(sample_id: str, raw: Mapping[str, JsonValue]) -> Sample:
    """The chat: its turns as the product reads them (`memdir.chatlogs.dialogues`), its questions."""
    turns, dates = realtalk_turns(raw)
    questions = [
        Question(
            id=f"{sample_id}-q{i + 1}",
            category=CATEGORIES.get(code := count(q["category"]), f"category-{q['category']}"),
            question=str(q["question"]),
            gold=str(q.get("answer", "")),
            evidence=tuple(parse_evidence(array(q.get("evidence")))),
            category_code=code,
            order=i + 1,
        )
        for i, q in enumerate(map(obj, array(raw.get("qa"))))
    ]
    names = raw.get("name", {})
    speakers = [str(v) for v in names.values()] if isinstance(names, dict) else []
    return Sample("realtalk", sample_id, turns, questions, dates, speakers=speakers)
