"""Lenient parsing of LoCoMo/REALTALK evidence ids (`D5:3`) into locators (`S5T3`); a turn's own
id is read strictly, with the turns (`memdir.chatlogs.dialogues.dia_locator`).

The sources are messy: `"D8:6; D9:17"`, `"D12:3-D12:5"` (a range), `"D5:3."`, `"D30:05"`
(zero-padded), `"D:11:26"` (stray colon), `"D13:45:D20:19"` (two ids run together) and a bare
`"D"`. Every `D<s>:<t>` found is taken; a range within one session is expanded to every turn
in it; anything else is dropped. Order is kept, duplicates removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ID = r"D:?(\d+):(\d+)"
_RANGE = re.compile(_ID + r"\s*-\s*D?:?(\d+):(\d+)")
_SINGLE = re.compile(_ID)


def parse_evidence(items: Iterable[object]) -> list[str]:
    out: dict[str, None] = {}
    for item in items:
        text = str(item)
        pos = 0
        while pos < len(text):
            rng = _RANGE.search(text, pos)
            one = _SINGLE.search(text, pos)
            if one is None:
                break
            if rng is not None and rng.start() == one.start():
                s1, t1, s2, t2 = (int(g) for g in rng.groups())
                if s1 == s2 and t1 <= t2:
                    for t in range(t1, t2 + 1):
                        out.setdefault(f"S{s1}T{t}", None)
                else:
                    out.setdefault(f"S{s1}T{t1}", None)
                    out.setdefault(f"S{s2}T{t2}", None)
                pos = rng.end()
            else:
                s, t = (int(g) for g in one.groups())
                out.setdefault(f"S{s}T{t}", None)
                pos = one.end()
    return list(out)
