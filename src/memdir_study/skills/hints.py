"""What an offline executor can take from retrieved entries: where things were, and a route.

Retrieved text is read the way a careful reader would read it, by its visible phrasing only:
observations of an episode (`On the countertop 2, you see a apple 1, ...`, `You open the
fridge 1. ... In it, you see ...`), its actions (`take apple 1 from countertop 2`), and the
fact lines of curated entries (`- apple: found in countertop 2 [E12]`; a synthesized
guidance line may say how often: `- apple: found in countertop 2 (room 3fa2b1c0d9) x3 [E12]`).
Instance names (`countertop 2`) are trusted only when the entry was written in the same room (the same
listing of receptacles); otherwise only the receptacle type (`countertop`) carries over.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from memdir.conventions import EPISODE

_ROOM = re.compile(r"(?:room|Room): (.+)$", re.MULTILINE)
# The phrasing of ALFWorld observations and of our fact lines, shared with the distiller and
# the offline guidance writer so that what is written and what is read cannot drift apart.
ON = re.compile(r"On the ([a-z]+ \d+), you see ([^.]*)\.")
IN = re.compile(r"You open the ([a-z]+ \d+)\. The [a-z]+ \d+ is open\. In it, you see ([^.]*)\.")
ITEM = re.compile(r"\b(?:a|an) ([a-z]+) \d+")
FACT = re.compile(
    r"^- ([a-z]+): (found|seen) in ([a-z]+(?: \d+)?)(?: \(room ([0-9a-f]+)\))?(?: x(\d+))?"
    rf"((?: \[{EPISODE}\])*)",
    re.MULTILINE,
)
"""A fact line: object, found|seen, receptacle, room (optional), times (optional), locators."""
_TAKE = re.compile(r"take ([a-z]+) \d+ from ([a-z]+ \d+)")

W_TAKEN, W_SEEN = 3.0, 1.0  # a place an object was taken from is stronger evidence than a sighting


def room_key(receptacles: list[str]) -> str:
    """A short stable fingerprint of a room: its sorted receptacle listing."""
    import hashlib

    return hashlib.sha1(", ".join(sorted(receptacles)).encode()).hexdigest()[:10]


@dataclass
class Hints:
    """Evidence, per object type, for where to look: {obj: {place: weight}}.

    A place is an instance (`countertop 2`) when the evidence came from this room, else a type.
    """

    places: dict[str, dict[str, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float))
    )
    sources: list[str] = field(default_factory=list)

    def add(self, obj: str, place: str, weight: float) -> None:
        self.places[obj][place] += weight

    def ranked(self, obj: str, receptacles: list[str]) -> list[str]:
        """The room's receptacles with evidence for `obj`, best first (instances beat types)."""
        ev = self.places.get(obj, {})
        scored: list[tuple[float, str]] = []
        for r in receptacles:
            rtype = r.rsplit(" ", 1)[0]
            score = 2.0 * ev.get(r, 0.0) + ev.get(rtype, 0.0)
            if score > 0:
                scored.append((score, r))
        scored.sort(key=lambda t: -t[0])
        return [r for _, r in scored]

    def __bool__(self) -> bool:
        return any(self.places.values())


def _items(listing: str) -> list[str]:
    return ITEM.findall(listing)


def read_hints(docs: list[tuple[str, str]], room: str, objects: set[str]) -> Hints:
    """Hints about `objects` from retrieved (path, text) pairs, for the room fingerprinted `room`."""
    hints = Hints()
    for path, text in docs:
        rooms = _ROOM.findall(text)
        same_room = room in {r.strip() for r in rooms}
        used = False

        def place(recep: str, doc_room: str | None = None, same_room: bool = same_room) -> str:
            if " " not in recep:
                return recep
            here = same_room if doc_room is None else doc_room == room
            return recep if here else recep.rsplit(" ", 1)[0]

        for recep, listing in [*ON.findall(text), *IN.findall(text)]:
            for obj in _items(listing):
                if obj in objects:
                    hints.add(obj, place(recep), W_SEEN)
                    used = True
        for obj, recep in _TAKE.findall(text):
            if obj in objects:
                hints.add(obj, place(recep), W_TAKEN)
                used = True
        for obj, kind, recep, doc_room, times, _locs in FACT.findall(text):
            if obj in objects:
                weight = (W_TAKEN if kind == "found" else W_SEEN) * int(times or 1)
                hints.add(obj, place(recep, doc_room or None), weight)
                used = True
        if used:
            hints.sources.append(path)
    return hints
