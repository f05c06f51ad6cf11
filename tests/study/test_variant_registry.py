"""A conversational variant is one registry entry: registered in one place (here, a test-local
entry with real builders of existing kinds), it is buildable, listed by `memdir study eval
--help`, accepted by `-v`, run and judged by the runner, given its search prompt form and round
cap, and, when it builds no store, not asked of a `--stores-from` source."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.agents import RunRecord
from memdir.cli.main import cli
from memdir.models import get_model
from memdir_study.bench import load_sample
from memdir_study.variants import (
    VARIANTS,
    BuildContext,
    ConversationVariant,
    VariantUnavailable,
    parse_variants,
    register,
    variant_role,
)
from memdir_study.variants.builders import closed_book, verbatim_dump

SAMPLE = "gen-s3-p2-n4-t3-a2-c1"
DUMP = ConversationVariant(
    "dump-again", verbatim_dump, note="the dump once more, a test's", study=False, search_form="search_dump"
)
FLOOR = ConversationVariant(
    "floor-again", closed_book, note="no store, a test's", study=False, builds_store=False
)


@pytest.fixture
def registered() -> Iterator[None]:
    for v in (DUMP, FLOOR):
        register(v)
    try:
        yield
    finally:
        for v in (DUMP, FLOOR):
            VARIANTS.pop(v.name, None)


def study_eval(*args: str) -> str:
    wide = {"terminal_width": 1000, "max_content_width": 1000}  # no name broken at its hyphen
    result = CliRunner().invoke(cli, ["study", "eval", *args], **wide)
    assert result.exit_code == 0, result.output
    return result.output


def rows(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]


def test_a_registered_variant_is_built_listed_accepted_and_judged(registered: None, tmp_path: Path) -> None:
    ctx = BuildContext(
        load_sample("generated", SAMPLE), tmp_path / "store", get_model("offline"), RunRecord(None)
    )
    built = asyncio.run(VARIANTS["dump-again"].build(ctx))
    assert built.store is not None and (tmp_path / "store" / "MEMORY.md").is_file()

    help_text = study_eval("--help")
    assert "dump-again (the dump once more, a test's)" in help_text
    assert "floor-again (no store, a test's)" in help_text
    assert "dump-again" not in parse_variants("all")  # memdir's own: run only when named
    assert parse_variants("dump-again,closed-book") == ["closed-book", "dump-again"]

    role = variant_role("answer", "dump-again")
    assert role.template == "search_dump" and role.round_cap == 20

    out = tmp_path / "run"
    common = ["-b", "generated", "-c", SAMPLE, "--questions", "2", "--no-progress"]
    study_eval(*common, "-v", "dump-again,floor-again", "--out", str(out))
    answered = rows(out)
    assert sorted({str(r["variant"]) for r in answered}) == ["dump-again", "floor-again"]
    assert len(answered) == 4 and all(isinstance(r["correctness"], float) for r in answered)

    again = tmp_path / "again"  # the floor builds no store: nothing is asked of the source for it
    study_eval(*common, "-v", "dump-again,floor-again", "--stores-from", str(out), "--out", str(again))
    manifest = json.loads((again / "manifest.json").read_text())
    assert list(manifest["stores_from"]["cells"]) == [f"generated/{SAMPLE}/dump-again"]
    assert len(rows(again)) == 4


def test_a_name_taken_twice_or_unknown_is_refused(registered: None) -> None:
    with pytest.raises(VariantUnavailable, match="already registered"):
        register(DUMP)
    with pytest.raises(VariantUnavailable, match="unknown variant"):
        parse_variants("dump-again,dump-twice")
    assert "dump-again" in VARIANTS
