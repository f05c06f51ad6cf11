"""The line merge of one file both sides changed: diff3's regions, decided so no fact is lost
and no git conflict marker is ever written (docs/sync.md).

The three texts are cut into stable regions (lines base, ours and theirs all hold, matched by
`difflib`) and the changed regions between them. A changed region takes the side that changed
it when only one did, either when both made the same change, and otherwise:

- both sides added lines at the same place (nothing of the base there): both additions, ours
  first, a line (or fact) theirs adds again left out;
- one side's lines already hold all of the other's (a merge landed before a kill and merged
  again, or an addition beside a kept line): the side that holds both;
- every line there is a keyed fact (both sides superseded the same value): both sides' lines,
  which the keyed pass (`keyed.py`) then puts in date order, one live;
- else both versions, between the notes `conventions.SYNC_ONE`, `SYNC_OTHER` and `SYNC_END`,
  which `memdir check` reports until someone keeps one.

The frontmatter (YAML, where a note would not parse, and where two sides' keys must not mix)
is merged apart from the body: a region of it both sides changed keeps this store's version.

Both `difflib` matchers run with `autojunk` off: with it on, a line repeated in a long file
(a blank line, a heading) could stop matching and make a whole file one changed region.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher

from memdir.conventions import SYNC_END, SYNC_ONE, SYNC_OTHER, fact_identity, parse_keyed

Region = tuple[int, int, int, int, int, int]  # base, ours, theirs: start and end of each


@dataclass
class LineMerge:
    lines: list[str]
    conflicts: int = 0  # regions kept in both versions, between the notes


def _stable(base: list[str], ours: list[str], theirs: list[str]) -> Iterator[Region]:
    """The regions all three hold (bzr's merge3 `find_sync_regions`), then an empty end."""
    a = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    b = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    ia = ib = 0
    while ia < len(a) and ib < len(b):
        abase, amatch, alen = a[ia]
        bbase, bmatch, blen = b[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            oa, ob = amatch + lo - abase, bmatch + lo - bbase
            yield lo, hi, oa, oa + hi - lo, ob, ob + hi - lo
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    yield len(base), len(base), len(ours), len(ours), len(theirs), len(theirs)


def _same(line: str) -> object:
    """What makes two added lines one: the fact, for a fact line; else the text."""
    return fact_identity(line) or line.strip()


def _holds(big: list[str], small: list[str]) -> bool:
    have = {_same(x) for x in big}
    return all(_same(x) in have for x in small if x.strip())


def _all_keyed(*parts: list[str]) -> bool:
    lines = [x for part in parts for x in part if x.strip()]
    return bool(lines) and all(parse_keyed("", 0, x) is not None for x in lines)


def _split(lines: list[str]) -> tuple[list[str], list[str]]:
    """A file's frontmatter (through its closing `---`) and its body."""
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            return lines[: end + 1], lines[end + 1 :]
    return [], lines


def merge_lines(base: list[str], ours: list[str], theirs: list[str]) -> LineMerge:
    """The frontmatter and the body merged apart: the YAML of two sides is never mixed."""
    (zf, zb), (of, ob), (tf, tb) = _split(base), _split(ours), _split(theirs)
    out = LineMerge([])
    front = _merge(zf, of, tf, front=True, out=out)
    out.lines = [*front, *_merge(zb, ob, tb, front=False, out=out)]
    return out


def _merge(base: list[str], ours: list[str], theirs: list[str], *, front: bool, out: LineMerge) -> list[str]:
    merged: list[str] = []
    iz = io = it = 0
    for zs, ze, os_, oe, ts, te in _stable(base, ours, theirs):
        z, o, t = base[iz:zs], ours[io:os_], theirs[it:ts]
        if o or t:
            merged.extend(_region(z, o, t, front, out))
        merged.extend(base[zs:ze])
        iz, io, it = ze, oe, te
    return merged


def _region(z: list[str], o: list[str], t: list[str], front: bool, out: LineMerge) -> list[str]:
    if o == t or t == z:
        return o
    if o == z:
        return t
    if front:
        return o  # frontmatter both changed: this store's (a note would not parse as YAML)
    extra = [x for x in t if x.strip() and _same(x) not in {_same(y) for y in o}]
    if not z:
        return [*o, *extra]
    if _holds(o, t):
        return o
    if _holds(t, o):
        return t
    if _all_keyed(z, o, t):
        return [*o, *extra]
    out.conflicts += 1
    return [SYNC_ONE, *o, SYNC_OTHER, *t, SYNC_END]
