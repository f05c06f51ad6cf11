"""A landing is atomic under SIGKILL (issue 33, defect 1): a consolidate merge and its revert,
each killed in a real process at every one of its write points, leave a store the next writer
finds whole (the old state or the new, every sourced fact of the store before still cited),
with no journal step holding half a landing and no throwaway copy left behind.
Full run: benchmarks/reliability/landing_kills.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.landing_kills import Campaign, campaign


def _check(result: Campaign) -> None:
    assert result.points >= 6  # the intent record, the files, the removals, the journal
    assert result.kills == result.points  # every point was reached, and killed there
    assert result.bad == [], [vars(o) for o in result.bad]
    assert result.facts_lost == 0
    assert {o.state for o in result.outcomes} == {"old", "new"}  # killed before and after it began
    for o in result.outcomes:  # journaled as the landing it was, never as a `recovered` step
        assert "recovered" not in o.tools, vars(o)
        assert (result.mode in o.tools) == (o.state == "new"), vars(o)


@pytest.mark.slow
def test_a_consolidate_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("consolidate", tmp_path))


@pytest.mark.slow
def test_a_revert_killed_at_every_write_of_its_landing_loses_nothing(tmp_path: Path) -> None:
    _check(campaign("revert", tmp_path))
