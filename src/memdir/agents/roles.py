"""The roles that share one store, with the configuration of record (docs/study.md).

Each role is a prompt template (markdown in `prompts/`), a tool profile, a round cap and an
output cap. Round caps: 60 for building a store, 40 for search over curated or reorganized
stores, 20 for other variants, 1 for closed-book. Output caps: 8,192 (search, judge), 32,768
(curation), 100,000 (reorganization). Reorganization runs 3 passes of at most 80 rounds.

The answering role is `answer`: the paper's *search agent*, which answers a question from the
store with its read-only tools and cites what it read. It is named for what it does so that
"search" stays the `search` profile (its tools) and `Memory.search` (no model), beside the
`section_search` tool; its prompt is still the search family's base form, `search.md` (the
paper's Appendix A.3; other forms of it live with whoever plays them, in their own `prompts/`).

The roles here carry the product's settings (`Memory.add` / `Memory.ask`, `memdir ingest` / `ask`,
`memdir consolidate`): the product's store is written in memdir's conventions (keyed facts, one
live value per key: docs/conventions.md), so every role here teaches or reads them (`keyed`), and
its answering role gets the organized store's round cap (`SEARCH_ROUNDS_PRODUCT`). A plugin's
variants set their own (prompt form, round cap, conventions) on top of these, in their own
package; no variant name is known here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from string import Template

from memdir.errors import MemdirError

USER_MARK = "<!-- user -->"
BUILD_ROUNDS = 60
SEARCH_ROUNDS_ORGANIZED = 40
SEARCH_ROUNDS_OTHER = 20
# The product's store is curated by its own management role: organized, so 40.
SEARCH_ROUNDS_PRODUCT = SEARCH_ROUNDS_ORGANIZED
SEARCH_OUTPUT = 8_192
CURATION_OUTPUT = 32_768
REORG_OUTPUT = 100_000
REORG_ROUNDS = 80
REORG_PASSES = 3
COMPACT_AT = 96_000
# The fixed instruction that closes every search prompt's user turn, after the question.
CITE_EVERY_CLAIM = (
    "Cite every factual claim in bracket notation: right after the claim, the file region it rests "
    "on, e.g. [/memories/people/alice.md:12-14]; your final JSON's `citations` lists them all."
)


@dataclass(frozen=True)
class Role:
    name: str
    template: str
    profile: str | None  # None: no tools at all
    round_cap: int
    output_cap: int
    answers: bool = False  # ends with the structured answer (answer, closed-book, guidance)
    keyed: bool = False  # the store follows memdir's keyed-fact conventions (the product's do)
    temperature: float | None = None
    compact_at: int = COMPACT_AT
    # The package whose `prompts/` holds `template`: the product's roles here; a plugin's own
    # roles (e.g. closed-book, skill search, execution) their own package.
    # The shared `_*.md` blocks are always the product's.
    package: str = "memdir.agents"

    def with_profile(self, profile: str | None) -> Role:
        return replace(self, profile=profile) if profile else self


ROLES: dict[str, Role] = {
    "management": Role("management", "management", "manage", BUILD_ROUNDS, CURATION_OUTPUT, keyed=True),
    "answer": Role(
        "answer", "search", "search", SEARCH_ROUNDS_PRODUCT, SEARCH_OUTPUT, answers=True, keyed=True
    ),
    "reorganize_preserve": Role(
        "reorganize_preserve", "reorganize_preserve", "manage", REORG_ROUNDS, REORG_OUTPUT, keyed=True
    ),
    "reorganize_condense": Role(
        "reorganize_condense", "reorganize_condense", "manage", REORG_ROUNDS, REORG_OUTPUT, keyed=True
    ),
}


def get_role(name: str, profile: str | None = None) -> Role:
    """The product's role `name` (the configuration of record, docs/study.md, with the product's
    settings), with `profile` in place of its own."""
    if name not in ROLES:
        raise MemdirError(f"unknown role {name!r}; choose one of {', '.join(ROLES)}")
    return ROLES[name].with_profile(profile)


def search_turn(question: str, core_memory: str | None = None) -> str:
    """The answering role's user turn: the question and the fixed citation instruction, after the
    store's core memory only where the caller loads it (the product does; a run that follows the
    paper's protocol does not)."""
    core = f"{core_memory.strip()}\n\n" if core_memory else ""
    return f"{core}{question}\n\n{CITE_EVERY_CLAIM}"


@cache
def _load(stem: str, package: str = "memdir.agents") -> str:
    return resources.files(package).joinpath("prompts", f"{stem}.md").read_text(encoding="utf-8")


def render(role: Role, **values: object) -> tuple[str, str]:
    """(system prompt, user message) of `role` with `values` filled in; missing values are errors."""
    text = _load(role.template, role.package)
    system, _, user = text.partition(USER_MARK)
    shared = {
        name: _load(f"_{name}").strip()
        for name in ("store_rules", "answer_format", "search_intro", "search_tree", "search_rules")
    }
    shared["keyed_rules"] = _load("_keyed_rules").strip() if role.keyed else ""
    shared["keyed_reading"] = _load("_keyed_reading").strip() if role.keyed else ""
    fill = {**shared, **{k: str(v) for k, v in values.items()}}
    if "search_turn" not in values and "question" in values:  # the search family's user turn
        fill["search_turn"] = search_turn(str(values["question"]), str(values.get("core_memory") or ""))
    try:
        return _tidy(Template(system.strip()).substitute(fill)), Template(user.strip()).substitute(fill)
    except KeyError as exc:
        raise MemdirError(f"prompt {role.template!r} needs a value for {exc.args[0]!r}") from None


def _tidy(text: str) -> str:
    """One blank line where a block left out (an empty `$keyed_rules`) would leave several."""
    return re.sub(r"\n{3,}", "\n\n", text)
