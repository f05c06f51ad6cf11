"""Frontmatter parsing (YAML 1.1 traps) and the heading outline (markdown-it rules)."""

from __future__ import annotations

import pytest

from memdir.store import frontmatter
from memdir.store.outline import find_sections, outline, parse_section_path


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("NO", "NO"),
        ("yes", "yes"),
        ("12:30", "12:30"),
        ("01234", "01234"),
        ("2023-05-02", "2023-05-02"),
        ("null", "null"),
        ("1e3", "1e3"),
    ],
)
def test_plain_scalars_stay_strings(value: str, expected: str) -> None:
    fm = frontmatter.parse(f"---\nname: a\ndescription: {value}\n---\n")
    assert fm.description == expected and not fm.lenient


def test_colon_in_description_falls_back_leniently() -> None:
    fm = frontmatter.parse(
        "---\nname: alice\ndescription: Alice: vegan since 2020\nmetadata:\n  type: note\n---\nbody\n"
    )
    assert fm.lenient
    assert fm.name == "alice"
    assert fm.description == "Alice: vegan since 2020"
    assert fm.metadata == {"type": "note"}
    assert frontmatter.validate("---\nname: alice\ndescription: Alice: vegan\n---\n", "alice.md") == []


def test_duplicate_keys_are_errors_in_both_readers() -> None:
    strict = "---\nname: a\ndescription: x\ndescription: y\n---\n"
    lenient = "---\nname: a\ndescription: x: 1\ndescription: y\n---\n"
    for text in (strict, lenient):
        assert any("duplicate" in e for e in frontmatter.validate(text, "a.md"))


def test_split_counts_lines_and_ignores_later_rules() -> None:
    text = "---\nname: a\ndescription: x\n---\nbody\n---\nmore\n"
    raw, n = frontmatter.split(text)
    assert raw == "name: a\ndescription: x" and n == 4
    assert frontmatter.split("no fm\n---\n") == (None, 0)
    assert frontmatter.split("---\nunterminated\n") == (None, 0)


@pytest.mark.parametrize("desc", ["NO", "12:30", "Alice: vegan", "'quoted'", "a # not a comment", "- dash"])
def test_dump_round_trips(desc: str) -> None:
    text = frontmatter.dump("x", desc, {"type": "skill", "when": "12:30"}) + "body\n"
    fm = frontmatter.parse(text)
    assert not fm.lenient
    assert fm.description == desc and fm.metadata == {"type": "skill", "when": "12:30"}
    assert frontmatter.validate(text, "x.md") == []


DOC = """---
name: doc
description: outline test
---
# Notes
intro
## Setup
```
# not a heading
```
    # indented code, not a heading
### Dependencies
deps
#### Deep
Setext Title
============
text
## Setup
second setup
# Other
##### Skipped levels
end
"""


def test_outline_exact() -> None:
    secs = outline(DOC)
    got = [(s.label, s.start, s.end, s.depth) for s in secs]
    assert got == [
        ("# Notes", 5, 14, 1),
        ("## Setup", 7, 14, 2),
        ("### Dependencies", 12, 14, 3),
        ("#### Deep", 14, 14, 4),
        ("# Setext Title", 15, 19, 1),
        ("## Setup", 18, 19, 2),
        ("# Other", 20, 22, 1),
        ("##### Skipped levels", 21, 22, 2),
    ]
    assert secs[2].path == "# Notes > ## Setup > ### Dependencies"


def test_frontmatter_rule_is_not_a_setext_underline() -> None:
    assert outline("---\nname: a\ndescription: b\n---\ntext\n") == []


def test_section_path_parsing_and_lookup() -> None:
    secs = outline(DOC)
    assert parse_section_path("# Notes > ## Setup") == [(1, "Notes"), (2, "Setup")]
    for bad in ["Notes > Setup", "# Notes>## Setup", "#Notes", "####### Seven", "# "]:
        with pytest.raises(ValueError):
            parse_section_path(bad)
    found = find_sections(secs, parse_section_path("# Notes > ## Setup > ### Dependencies"))
    assert [s.start for s in found] == [12]
    assert find_sections(secs, parse_section_path("## Setup")) == []  # must start at a top-level heading
    assert [s.start for s in find_sections(secs, parse_section_path("# Other > ##### Skipped levels"))] == [
        21
    ]
