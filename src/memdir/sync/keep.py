"""Never lose a fact: the preserve-facts guard applied to a merge (docs/sync.md).

A fact line this store holds (a line with a locator; one fact by `conventions.fact_identity`,
the identity the guard and `diff --facts` use) must be somewhere in the merged files, unless
this store itself removed it. The remote may have dropped it by an edit, a deleted file or a
force-push that lost its history: then it is put back, and the sync report names it. A keyed
value counts as kept when the merged files hold its value with the same start and locators,
live or struck through (a supersede rewrites the line, not the fact). A line comes back at the
end of the file it was in; when the merge removed that file, at the end of the file that holds
most of its other facts now, or, with none, the file comes back whole as this store had it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from memdir.conventions import Fact, fact_identity, lines, parse_keyed

Keyed = tuple[tuple[str, str], str, str, tuple[str, ...]]  # key, start, value, locators


def _keyed(line: str) -> Keyed | None:
    f = parse_keyed("", 0, line)
    return None if f is None else (f.key, f.since, " ".join(f.value.split()).casefold(), f.locators)


def _facts(text: str) -> dict[Fact, str]:
    out: dict[Fact, str] = {}
    for line in lines(text):
        fact = fact_identity(line)
        if fact is not None:
            out.setdefault(fact, line)
    return out


def keep(
    ours: Mapping[str, str],
    merged: dict[str, str],
    unchanged: Callable[[], Mapping[str, str]],
) -> list[str]:
    """Put back into `merged` ({path: text} of the files the merge changed or removed, a
    removed one absent) every fact `ours` ({path: text} of this store's versions of those
    files) held that no merged file holds; `unchanged()` gives the texts of every other file,
    read only when a fact is missing from the changed ones. Returns `path: line` of each."""
    lost: dict[Fact, tuple[str, str]] = {}
    for path, text in ours.items():
        if merged.get(path) == text:
            continue
        for fact, line in _facts(text).items():
            lost.setdefault(fact, (path, line))
    if not lost:
        return []
    holds: dict[Fact, str] = {}
    keyed: set[Keyed] = set()

    def scan(texts: Mapping[str, str]) -> None:
        for path, text in texts.items():
            for fact, line in _facts(text).items():
                holds.setdefault(fact, path)
                k = _keyed(line)
                if k is not None:
                    keyed.add(k)

    def missing() -> dict[Fact, tuple[str, str]]:
        return {f: (p, line) for f, (p, line) in lost.items() if f not in holds and _keyed(line) not in keyed}

    scan(merged)
    lost = missing()
    others: Mapping[str, str] = {}
    if lost:
        others = {p: t for p, t in unchanged().items() if p not in merged}
        scan(others)
        lost = missing()
    by_path: dict[str, list[str]] = {}
    for path, line in lost.values():
        by_path.setdefault(path, []).append(line)
    kept: list[str] = []
    for path, back in by_path.items():
        target = path if path in merged else _home(_facts(ours[path]), holds)
        if target is None:
            merged[path] = ours[path]
        else:
            merged[target] = _appended(merged.get(target, others.get(target, "")), back)
        kept += [f"{target or path}: {line.strip()}" for line in back]
    return sorted(kept)


def _home(facts: Mapping[Fact, str], holds: Mapping[Fact, str]) -> str | None:
    """The file now holding most of these facts (a file the merge moved them to)."""
    places = Counter(holds[f] for f in facts if f in holds)
    return places.most_common(1)[0][0] if places else None


def _appended(text: str, add: list[str]) -> str:
    body = text.rstrip("\n")
    return body + "\n" + "\n".join(x.rstrip() for x in add) + "\n"
