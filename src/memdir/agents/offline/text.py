"""Words for the offline baseline policies: tokenizing, a crude stemmer, stopwords, topic keys."""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves i'm it's that's what's did does s t don
    dont like also really get got go going one thing things much many lot well yeah oh know think
    kind said says tell told
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_SUFFIXES = ("ences", "ence", "ings", "ing", "edly", "ed", "ies", "es", "s", "ly")


def stem(word: str) -> str:
    w = word.lower().strip("'-")
    if w.endswith("'s"):
        w = w[:-2]
    for suf in _SUFFIXES:
        if len(w) - len(suf) >= 4 and w.endswith(suf):
            w = w[: -len(suf)] + ("y" if suf == "ies" else "")
            break
    if len(w) >= 5 and w[-1] == w[-2] and w[-1] not in "aeiousl":
        w = w[:-1]  # preferr -> prefer, shopp -> shop
    return w


def terms(text: str) -> list[str]:
    """Content-word stems of `text`, in order, stopwords dropped."""
    return [stem(w) for w in WORD.findall(text) if w.lower() not in STOPWORDS and len(w) > 1]


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "someone"


TOPICS: dict[str, tuple[str, ...]] = {
    "work": (
        "job",
        "work",
        "office",
        "career",
        "boss",
        "company",
        "colleague",
        "coworker",
        "project",
        "business",
        "hired",
        "interview",
        "promotion",
        "salary",
        "client",
        "shift",
        "manager",
    ),
    "family": (
        "mom",
        "dad",
        "mother",
        "father",
        "sister",
        "brother",
        "kid",
        "kids",
        "son",
        "daughter",
        "wife",
        "husband",
        "family",
        "parent",
        "parents",
        "grandma",
        "grandpa",
        "grandmother",
        "baby",
        "cousin",
    ),
    "travel": (
        "trip",
        "travel",
        "vacation",
        "flight",
        "visit",
        "visited",
        "beach",
        "hotel",
        "abroad",
        "tour",
        "road",
        "journey",
        "holiday",
        "camping",
        "fly",
        "flew",
    ),
    "food": (
        "food",
        "eat",
        "ate",
        "cook",
        "cooking",
        "recipe",
        "restaurant",
        "dinner",
        "lunch",
        "breakfast",
        "coffee",
        "tea",
        "vegan",
        "vegetarian",
        "diet",
        "pizza",
        "bake",
        "baking",
        "drink",
        "meal",
    ),
    "health": (
        "health",
        "doctor",
        "hospital",
        "sick",
        "exercise",
        "gym",
        "running",
        "yoga",
        "workout",
        "injury",
        "therapy",
        "surgery",
        "pain",
        "medicine",
        "sleep",
        "stress",
    ),
    "hobbies": (
        "hobby",
        "paint",
        "painting",
        "music",
        "guitar",
        "piano",
        "book",
        "books",
        "reading",
        "game",
        "games",
        "movie",
        "film",
        "hiking",
        "art",
        "photography",
        "dance",
        "sport",
        "sports",
        "concert",
        "song",
        "draw",
        "drawing",
        "pottery",
        "garden",
        "gardening",
        "play",
        "played",
    ),
    "home": ("home", "house", "apartment", "moved", "move", "live", "neighborhood", "rent", "city", "town"),
    "pets": ("dog", "cat", "pet", "pets", "puppy", "kitten", "horse", "bird"),
    "education": (
        "school",
        "class",
        "college",
        "university",
        "study",
        "studying",
        "degree",
        "course",
        "exam",
        "teacher",
        "student",
        "graduate",
        "graduated",
    ),
    "relationships": (
        "friend",
        "friends",
        "date",
        "dating",
        "partner",
        "boyfriend",
        "girlfriend",
        "wedding",
        "married",
        "relationship",
        "community",
        "support",
    ),
}
_TOPIC_STEMS = {topic: {stem(w) for w in words} for topic, words in TOPICS.items()}


def topic_of(text: str) -> str:
    """The topic whose keys the text hits most (first listed wins a tie); 'general' if none."""
    stems = [stem(w) for w in WORD.findall(text)]
    best, best_hits = "general", 0
    for topic, keys in _TOPIC_STEMS.items():
        hits = sum(1 for s in stems if s in keys)
        if hits > best_hits:
            best, best_hits = topic, hits
    return best
