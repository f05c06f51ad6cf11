"""The source-locator grammar of docs/conventions.md, shared by every layer that reads facts.

A locator names where a fact came from: `S6T5` (session 6, turn 5: LoCoMo, REALTALK), `B3M12`
(block 3, message 12: PersonaMem), `E12` (episode 12: the skill setting). In a file they stand
in brackets, one or several: `[S6T5]`, `[S6T5, S7T2]`. The guards (tools), the fact parser
(analytics) and the convention checks read the same pattern from here, so a new kind of
locator is one edit.
"""

from __future__ import annotations

import re

ONE = r"(?:S\d+T\d+|B\d+M\d+|E\d+)"
LOCATOR = re.compile(rf"\[({ONE}(?:,\s*{ONE})*)\]")
"""A bracketed locator group; group 1 is its inside (`S6T5, S7T2`)."""
