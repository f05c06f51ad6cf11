"""The signposts the lexical searcher navigates by: folder listings and `MEMORY.md` indexes.

A listing names every entry with its size and description and opens no file body, so it costs
no bytes read; an index is a small file. From them the searcher learns, before reading anything
else, which folders a question names (a person's folder, say), how large each file is (so a
small one is read whole and a large one by section), and which keyed-fact sections an index
lists (so a question about someone's home reads that one section). These are read the same way
for every store: a store with no named folder (a flat dump) just gives nothing to descend into.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memdir.agents.offline.text import STOPWORDS, WORD, stem

ROW = re.compile(r"^(?P<size>\d+(?:\.\d+)?)(?P<unit>[BKMG])\t(?P<rest>/memories/.*)$")
UNITS = {"B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
DESCRIPTION = "  [description: "
ATTRIBUTES_SAY = "one section per attribute:"
"""How an index line names the attribute sections of a keyed-facts file (the offline curator
writes `- facts.md: keyed facts (...), one section per attribute: home, job`)."""
INDEX_FILE = re.compile(rf"^[-*]\s+(?P<name>[^\s/:]+\.md):.*?{re.escape(ATTRIBUTES_SAY)}(?P<attrs>.*)$")
# Question words that name a keyed attribute the curator writes (a tiny query expansion).
ATTRIBUTE_CUES: dict[str, frozenset[str]] = {
    attr: frozenset(stem(w) for w in words)
    for attr, words in {
        "home": ("live", "living", "lives", "home", "reside", "moved", "house", "city", "where"),
        "job": ("work", "works", "job", "career", "profession", "occupation", "employed"),
        "diet": ("diet", "eat", "eats", "eating", "food", "meat", "vegan", "vegetarian"),
        "preference": ("prefer", "prefers", "like", "likes", "enjoy", "drink", "favorite"),
        "study": ("study", "studies", "studying", "major", "majoring", "degree"),
    }.items()
}


@dataclass(frozen=True)
class Entry:
    path: str
    size: int  # as the listing shows it (to a tenth of a K): enough to tell small from large
    is_dir: bool
    description: str


def parse_listing(text: str) -> list[Entry]:
    """The entries of a `view` of a folder (its first row, the folder itself, left out)."""
    out: list[Entry] = []
    for row in text.split("\n")[1:]:
        m = ROW.match(row)
        if not m:
            continue
        rest, _, desc = m["rest"].partition(DESCRIPTION)
        size = int(float(m["size"]) * UNITS[m["unit"]])
        out.append(Entry(rest.rstrip("/"), size, rest.endswith("/"), desc.removesuffix("]")))
    return out


def proper_names(question: str) -> set[str]:
    """The capitalized words of a question, lowercased ("Calvin's" gives "calvin"), question
    words left out: what a question calls its subject. Common words (a folder named `work`) are
    not names: they would scope a search to one topic of everyone's."""
    words: set[str] = set()
    for w in WORD.findall(question):
        if w[0].isupper() and w.lower() not in STOPWORDS:
            w = w.lower().removesuffix("'s").removesuffix("'")
            words.add(w)
            words.update(w.split("-"))
    return words


def named_folders(entries: list[Entry], question: str) -> list[str]:
    """Folders whose name the question spells out as a name (`people/calvin` for "What did
    Calvin buy?"), the deepest when a folder and one inside it are both named."""
    words = proper_names(question)
    named = []
    for e in entries:
        parts = e.path.rsplit("/", 1)[1].split("-")
        if e.is_dir and any(p.isalpha() for p in parts) and all(p in words for p in parts):
            named.append(e.path)
    return [p for p in named if not any(q.startswith(p + "/") for q in named)]


def name_stems(folders: list[str]) -> set[str]:
    return {stem(p) for f in folders for p in f.rsplit("/", 1)[1].split("-")}


def cued(attribute: str, question: str) -> bool:
    """The question asks about `attribute`: a cue word of it, or all of its own words."""
    q = {stem(w) for w in WORD.findall(question)}
    own = {stem(w) for w in WORD.findall(attribute)}
    return bool(ATTRIBUTE_CUES.get(attribute, frozenset()) & q) or bool(own and own <= q)


def keyed_sections(index: str, folder: str, question: str) -> list[tuple[str, str]]:
    """(file, attribute) of every keyed-fact section the folder's index lists and the question
    cues, in the index's order."""
    out: list[tuple[str, str]] = []
    for row in index.split("\n"):
        text = row.split("\t", 1)[1] if "\t" in row else row
        m = INDEX_FILE.match(text.strip())
        if m:
            for attr in (a.strip() for a in m["attrs"].split(",")):
                if attr and cued(attr, question):
                    out.append((f"{folder}/{m['name']}", attr))
    return out
