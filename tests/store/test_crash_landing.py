"""Every landing is whole under SIGKILL and no reader is left without a fact (issue 33, defect
1; issue 46, item 1): a consolidate merge, its revert, the revert of the merge's operation with
a later operation kept, an adopt --rename and its revert, each killed in a real process at every one of its
write points. Right after each kill the files on disk still hold every fact the landing keeps
(new files are in place before old ones go); then, before any write, the readers (BM25 search
and view through the tools, `check`'s bare store) each find every one of them, whichever opens
the store first; then the next writer finds the store whole (the old state or the new), with no
journal step holding half a landing, none journaled as `recovered`, no throwaway copy left.
Full run (300 notes for adopt): benchmarks/reliability/landing_kills.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.landing_kills import TOOL, Campaign, campaign


def _check(result: Campaign) -> None:
    assert result.points >= 6  # the intent record, the files, the removals, the journal
    assert result.kills == result.points  # every point was reached, and killed there
    assert result.bad == [], [vars(o) for o in result.bad]
    assert result.facts_lost == 0 and result.absent_on_disk == 0
    assert {o.state for o in result.outcomes} == {"old", "new"}  # killed before and after it began
    for o in result.outcomes:  # journaled as the landing it was, never as a `recovered` step
        assert o.read_state == o.state, vars(o)  # the readers had already finished the landing
        assert "recovered" not in o.tools, vars(o)
        assert (TOOL[result.mode] in o.tools) == (o.state == "new"), vars(o)


@pytest.mark.slow
def test_a_consolidate_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("consolidate", tmp_path))


@pytest.mark.slow
def test_a_revert_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("revert", tmp_path))


@pytest.mark.slow
def test_a_revert_of_an_operation_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("revert-operation", tmp_path))


@pytest.mark.slow
def test_an_adopt_rename_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("adopt-rename", tmp_path, notes=8))


@pytest.mark.slow
def test_an_adopt_renames_revert_killed_at_every_write_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("revert-adopt-rename", tmp_path, notes=8))
