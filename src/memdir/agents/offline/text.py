"""Words for the offline baseline policies: slugs and topic keys (tokens, stopwords and the
stemmer are `memdir.words`, re-exported here)."""

from __future__ import annotations

import re

from memdir.words import STOPWORDS, WORD, stem, terms

__all__ = ["STOPWORDS", "TOPICS", "WORD", "slug", "stem", "terms", "topic_of"]


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
