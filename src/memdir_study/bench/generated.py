"""A generated benchmark of our own: seeded multi-session chats in which people state, repeat
and later change preferences and plans, with questions about the current value, the previous
value and when it changed.

What it measures: whether a store keeps *chronology*. A dump or a store that overwrites in
place can still say what someone likes, but only dated supersede (conventions: the live line
`- alice | diet: vegan (since 2023-05-02) [S6T5]` above the struck-through old one) answers all
three questions at once: the current value (a stale line must not stand as live), the previous
value (the old one must survive) and the date of the change (the session date must be kept).
Repeats of an unchanged value ("still vegetarian") test that restatement is not mistaken for a
change. Chit-chat turns without facts dilute the stream.

It also scales, deterministically (same parameters and seed, same stream): `sessions` and
`turns_per_session` grow the corpus while the question battery stays about the same (one key is
mentioned at most `max_changes + 3` times), so cost curves compare the same questions over a
bigger haystack; `people` and `attributes` grow the battery (up to 3 questions per key).
No external data. Everything is dated by session (`Turn.date`), and the ground truth of every
keyed fact over time is in `Sample.facts`.

Sample ids carry the parameters: `gen-s42` (all defaults) or e.g. `gen-s7-p4-n30-t10-a5-c2`
(seed 7, 4 people, 30 sessions, 10 turns per session, 5 attributes each, at most 2 changes).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, timedelta

from memdir.stream import Turn
from memdir_study.bench.data import UnknownSample
from memdir_study.bench.types import Fact, Question, Sample

NAMES = (
    "Alice",
    "Bruno",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wes",
    "Yuki",
)


@dataclass(frozen=True)
class Attribute:
    """A keyed fact: its values and how people state it, restate it and change it."""

    name: str
    values: tuple[str, ...]
    state: str
    repeat: str
    change: str


ATTRIBUTES = (
    Attribute(
        "diet",
        ("vegetarian", "vegan", "pescatarian", "keto", "paleo", "gluten-free", "flexitarian"),
        "I've been eating {v} for a while now, it suits me.",
        "Still {v} here, no cheating this week!",
        "Big news on the food front: I've gone {v}.",
    ),
    Attribute(
        "favorite cuisine",
        ("Thai", "Italian", "Ethiopian", "Mexican", "Japanese", "Lebanese", "Korean"),
        "Honestly my favorite food is {v}, I could eat it every day.",
        "Had {v} again last night, it's still my favorite.",
        "My taste has changed: {v} is my favorite cuisine now.",
    ),
    Attribute(
        "hobby",
        ("pottery", "rock climbing", "chess", "birdwatching", "salsa dancing", "woodworking", "sailing"),
        "I spend most weekends on {v}, it's my main hobby.",
        "Spent Saturday on {v} as usual.",
        "I've picked up {v} and it has become my main hobby.",
    ),
    Attribute(
        "home city",
        ("Lisbon", "Denver", "Osaka", "Nairobi", "Montreal", "Prague", "Melbourne"),
        "Life in {v} is good, I love living here.",
        "{v} had lovely weather this week.",
        "I finally moved: I live in {v} now.",
    ),
    Attribute(
        "job",
        ("nurse", "data analyst", "carpenter", "teacher", "pilot", "chef", "architect"),
        "Work as a {v} keeps me busy.",
        "Another long week as a {v}.",
        "I changed careers, I'm working as a {v} now.",
    ),
    Attribute(
        "travel plan",
        ("Iceland", "Peru", "Vietnam", "Morocco", "Norway", "Chile", "Greece"),
        "I'm planning a trip to {v} next year.",
        "Still saving up for the {v} trip.",
        "Change of plans: the trip is going to be to {v} instead.",
    ),
    Attribute(
        "workout",
        ("running", "swimming", "yoga", "cycling", "boxing", "rowing", "pilates"),
        "My workout of choice is {v}, three times a week.",
        "Did my {v} session this morning.",
        "I switched my workout to {v}.",
    ),
    Attribute(
        "car",
        ("Subaru Outback", "Toyota Prius", "Ford Mustang", "Honda Civic", "Volvo XC60", "Mazda MX-5"),
        "I drive a {v}, it's been reliable.",
        "Took the {v} for a long drive.",
        "I sold my old car and bought a {v}.",
    ),
    Attribute(
        "morning drink",
        ("espresso", "green tea", "matcha latte", "black coffee", "chai", "yerba mate"),
        "I can't start the day without a {v}.",
        "Having my {v} as we speak.",
        "I've swapped my morning drink for a {v}.",
    ),
    Attribute(
        "reading genre",
        ("science fiction", "mystery", "history", "poetry", "fantasy", "biography"),
        "I mostly read {v} these days.",
        "Just finished another {v} book.",
        "I've moved on from my old books, now it's all {v}.",
    ),
    Attribute(
        "language course",
        ("Spanish", "Japanese", "Portuguese", "Arabic", "German", "Korean", "Swahili"),
        "I'm taking an evening course in {v}.",
        "My {v} class was fun this week.",
        "I dropped my old course and started learning {v}.",
    ),
    Attribute(
        "next purchase",
        ("a piano", "a kayak", "an e-bike", "a telescope", "an espresso machine", "a tent"),
        "I'm saving up to buy {v}.",
        "Still putting money aside for {v}.",
        "I've changed my mind about what to buy next: {v}.",
    ),
)

CHITCHAT = (
    "Did you catch the game last night?",
    "The weather has been all over the place lately.",
    "I watched a documentary about octopuses, wild stuff.",
    "My neighbor's dog keeps barking at the mail carrier.",
    "I finally fixed the squeaky door in the hallway.",
    "Traffic was terrible on the way home today.",
    "I've been meaning to clean out the garage for weeks.",
    "Have you seen any good movies recently?",
    "I tried a new podcast about urban planning.",
    "The power went out for an hour yesterday.",
    "My phone screen cracked again, of course.",
    "I spent the evening sorting old photos.",
    "There's a street fair downtown this weekend.",
    "I've been sleeping badly, too much screen time.",
    "Somebody left a huge pumpkin on our doorstep.",
)
REPLIES = (
    "Oh nice, good for you!",
    "Ha, that sounds like you.",
    "Really? Tell me more sometime.",
    "That's great to hear.",
    "Interesting, I didn't see that coming.",
    "Makes sense to me.",
    "Cool, keep me posted.",
    "Love that.",
)
START = date(2023, 1, 9)
_ID = re.compile(
    r"^gen-s(?P<s>\d+)(?:-p(?P<p>\d+))?(?:-n(?P<n>\d+))?(?:-t(?P<t>\d+))?(?:-a(?P<a>\d+))?(?:-c(?P<c>\d+))?$"
)


def sample_id(
    seed: int = 42,
    people: int = 3,
    sessions: int = 12,
    turns_per_session: int = 8,
    attributes: int = 4,
    max_changes: int = 2,
) -> str:
    return f"gen-s{seed}-p{people}-n{sessions}-t{turns_per_session}-a{attributes}-c{max_changes}"


def load(sid: str = "gen-s42") -> Sample:
    m = _ID.match(sid)
    if not m:
        raise UnknownSample(f"{sid!r} is not a generated sample id; e.g. gen-s42 or gen-s7-p4-n30-t10-a5-c2")
    args = {k: int(v) for k, v in m.groupdict().items() if v is not None}
    names = {
        "s": "seed",
        "p": "people",
        "n": "sessions",
        "t": "turns_per_session",
        "a": "attributes",
        "c": "max_changes",
    }
    sample = generate(**{names[k]: v for k, v in args.items()})
    sample.id = sid
    return sample


def generate(
    seed: int = 42,
    people: int = 3,
    sessions: int = 12,
    turns_per_session: int = 8,
    attributes: int = 4,
    max_changes: int = 2,
) -> Sample:
    """Build one conversation stream and its questions; deterministic for the arguments."""
    if people < 2:
        raise UnknownSample("the generated benchmark needs at least 2 people (they talk to each other)")
    if not 1 <= attributes <= len(ATTRIBUTES):
        raise UnknownSample(f"attributes must be between 1 and {len(ATTRIBUTES)}")
    if sessions < 1 or turns_per_session < 1 or max_changes < 0:
        raise UnknownSample("sessions and turns_per_session must be at least 1, max_changes at least 0")
    rng = random.Random(seed)
    names = [
        NAMES[i % len(NAMES)] + (str(i // len(NAMES) + 1) if i >= len(NAMES) else "") for i in range(people)
    ]
    pairs = [tuple(rng.sample(names, 2)) for _ in range(sessions)]
    dates: dict[int, str | None] = {}
    day = START
    for s in range(1, sessions + 1):
        dates[s] = day.isoformat()
        day += timedelta(days=rng.randint(3, 21))

    # Plan every mention: (session, person, attribute, kind, value).
    plan: dict[int, list[tuple[str, Attribute, str, str]]] = {s: [] for s in dates}
    keys: list[tuple[str, Attribute]] = []
    for person in names:
        present = [s for s, pair in enumerate(pairs, 1) if person in pair]
        for attr in rng.sample(ATTRIBUTES, attributes):
            if not present:
                continue
            keys.append((person, attr))
            mentions = sorted(rng.sample(present, min(len(present), 1 + rng.randint(1, max_changes + 2))))
            pool = list(attr.values)
            rng.shuffle(pool)
            value, changes = pool.pop(), 0
            plan[mentions[0]].append((person, attr, "state", value))
            for s in mentions[1:]:
                if changes < max_changes and pool and rng.random() < 0.6:
                    value, changes = pool.pop(), changes + 1
                    plan[s].append((person, attr, "change", value))
                else:
                    plan[s].append((person, attr, "repeat", value))

    turns: list[Turn] = []
    said: dict[tuple[str, str], list[tuple[str, str, str]]] = {}  # key -> [(kind, value, locator)]
    for s, (a, b) in enumerate(pairs, 1):
        blocks: list[list[tuple[str, str, tuple[str, str, str, str] | None]]] = []
        for person, attr, kind, value in plan[s]:
            other = b if person == a else a
            text = getattr(attr, kind).format(v=value)
            blocks.append(
                [(person, text, (person, attr.name, kind, value)), (other, rng.choice(REPLIES), None)]
            )
        filler = max(0, turns_per_session - 1 - 2 * len(blocks))
        for _ in range(filler):
            blocks.append([(rng.choice((a, b)), rng.choice(CHITCHAT), None)])
        rng.shuffle(blocks)
        session_turns = [(a, f"Hi {b}, good to talk again!", None)] + [t for blk in blocks for t in blk]
        for i, (speaker, text, event) in enumerate(session_turns, 1):
            loc = f"S{s}T{i}"
            turns.append(Turn(loc, speaker, text, dates[s]))
            if event:
                said.setdefault((event[0], event[1]), []).append((event[2], event[3], loc))

    facts: list[Fact] = []
    questions: list[Question] = []
    for person, attr in keys:
        history = [(v, loc) for kind, v, loc in said.get((person, attr.name), []) if kind != "repeat"]
        if not history:
            continue
        spans: list[tuple[str, str, str | None, str]] = []
        for i, (value, loc) in enumerate(history):
            since = dates[_session(loc)] or ""
            until = dates[_session(history[i + 1][1])] if i + 1 < len(history) else None
            spans.append((value, since, until, loc))
            facts.append(Fact(person, attr.name, value, since, until, loc))
        base = f"{person.lower()}-{attr.name.replace(' ', '-')}"
        cur, cur_since, _, cur_loc = spans[-1]
        questions.append(
            _q(f"{base}-current", "current", f"What is {person}'s current {attr.name}?", cur, cur_loc)
        )
        if len(spans) > 1:
            prev, _, _, prev_loc = spans[-2]
            questions.append(
                _q(
                    f"{base}-previous",
                    "previous",
                    f"What was {person}'s {attr.name} before it last changed?",
                    prev,
                    prev_loc,
                )
            )
            questions.append(
                _q(
                    f"{base}-when",
                    "changed-when",
                    f"On what date did {person}'s {attr.name} last change? Answer as YYYY-MM-DD.",
                    cur_since,
                    cur_loc,
                )
            )
    questions = [
        Question(q.id, q.category, q.question, q.gold, q.evidence, order=i + 1)
        for i, q in enumerate(questions)
    ]
    sid = sample_id(seed, people, sessions, turns_per_session, attributes, max_changes)
    return Sample("generated", sid, turns, questions, dates, speakers=names, facts=facts)


def _session(locator: str) -> int:
    return int(locator[1 : locator.index("T")])


def _q(qid: str, category: str, text: str, gold: str, locator: str) -> Question:
    return Question(qid, category, text, gold, (locator,))
