"""One name, one thing (issue 35): a concept the store records is defined once, in the store, and
every other layer uses that class; a different thing gets a different name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "memdir"


def _classes_named(name: str) -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            str(path.relative_to(SRC))
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name == name
        ]
    return found


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("Change", "store/store.py"),  # a file-level effect of a step
        ("Step", "store/store.py"),  # one tool call's writes, in the making
        ("JournalStep", "store/journal/format.py"),  # a step as the journal recorded it
    ],
)
def test_a_store_record_is_defined_once_in_the_store(name: str, home: str) -> None:
    assert _classes_named(name) == [home]


def test_the_apis_choice_types_are_the_tables_own() -> None:
    """The API's profile, search-mode and format types are the tables they choose from, not
    copies to keep in step: a mode or format added there is one the API takes."""
    from typing import get_args

    from memdir.api import Profile, SearchMode
    from memdir.api.memory import Format
    from memdir.search import hybrid
    from memdir.tools import schemas

    assert SearchMode is hybrid.Mode and set(get_args(SearchMode)) == set(hybrid.MODES)
    assert Format is schemas.Format and set(get_args(Format)) == set(schemas.FORMATS)
    assert Profile is str  # a name in tools/profiles.PROFILES, checked by require_profile


@pytest.mark.parametrize("name", ["Answer", "Citation", "Operation", "Step", "Change"])
def test_a_public_name_is_one_class(name: str) -> None:
    """The API's names are each one class in all of src: the answer as parsed off a reply is a
    `ParsedAnswer`, what a citation names a `CitationTarget`, a step's operation an `OperationTag`,
    the scripted model's reply a `ScriptedReply`."""
    assert len(_classes_named(name)) == 1, _classes_named(name)
