"""The mechanism model's four results (benchmarks/mechanism.py), each checked on a small size.

The model lives in the benchmark script, which prints and plots the full-size figures. No other
test imports a benchmark, and benchmarks/ is not a package (its scripts import `_common` as a
top-level module, the way they run as `python benchmarks/x.py`), so this file puts benchmarks/
on sys.path and imports the script as the module `mechanism`. Each check asserts the direction
and the rough size of its effect, so a change that weakens one fails here.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from memdir.analytics.integrity import check
from memdir.store import spec
from memdir.tools.profiles import Harness

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
mechanism = importlib.import_module("mechanism")

SMALL, LARGER = 10, 40  # sessions: a 6.9 KB and a 25.6 KB dump


@pytest.fixture(scope="module")
def small() -> Any:
    return mechanism.sample_for(SMALL)


def test_the_stores_follow_the_conventions(small: Any, tmp_path: Path) -> None:
    stores = {
        "dump": mechanism.build_dump(tmp_path / "dump", small),
        "sharded": mechanism.write_tree(tmp_path / "sharded", mechanism.sharded_files(small)),
        "consolidated": mechanism.write_tree(tmp_path / "consolidated", mechanism.consolidated_files(small)),
    }
    for name, store in stores.items():
        assert spec.validate(store).violations == [], name
        assert [p for p in check(store).problems if p.rule == "supersede"] == [], name
    # One file per key, and the sweep's listing reaches every file but the indexes.
    sharded = stores["sharded"]
    keys = mechanism.histories(small)
    assert all(sharded.exists(mechanism.route_sharded(*k)) for k in keys)
    swept = mechanism.sweep(Harness(sharded, "search"))
    assert len(swept) == sum(1 for e in sharded.files() if e.path.name != "MEMORY.md")


def test_sharding_by_key_reads_sublinearly_and_topics_save_a_constant_factor(tmp_path: Path) -> None:
    small = mechanism.scaling(mechanism.sample_for(SMALL), tmp_path / "small")
    larger = mechanism.scaling(mechanism.sample_for(LARGER), tmp_path / "larger")
    for result in (small, larger):
        for name in mechanism.STORES:
            assert result[name]["right"] == result[name]["questions"], name  # a cost, never a loss
            assert result[name]["misses"] == 0, name
    corpus = larger["verbatim-dump"]["bytes_read_per_q"] / small["verbatim-dump"]["bytes_read_per_q"]
    assert corpus > 3

    def grew(name: str) -> float:
        return float(larger[name]["bytes_read_per_q"] / small[name]["bytes_read_per_q"])

    # Sharded: reads barely grow while the corpus grows 3.7x, so the saving rises toward 100%.
    assert grew("sharded") < 0.5 * corpus
    assert small["sharded"]["saving"] > 0.9
    assert larger["sharded"]["saving"] > small["sharded"]["saving"]
    # Consolidated by topic: reads grow with the corpus; the saving is a constant factor.
    assert grew("consolidated") > 0.8 * corpus
    for result in (small, larger):
        assert 0.4 < result["consolidated"]["saving"] < 0.85
        assert result["sharded"]["saving"] > result["consolidated"]["saving"] + 0.2
    assert abs(larger["consolidated"]["saving"] - small["consolidated"]["saving"]) < 0.1


def test_undated_updates_cannot_say_what_came_before_or_when(small: Any, tmp_path: Path) -> None:
    result = mechanism.chronology(small, tmp_path)
    dated, undated = result["dated supersede"], result["undated, destructive"]
    assert dated["previous"]["questions"] >= 3
    for cat in ("current", "previous", "changed-when"):
        assert dated[cat]["right"] == dated[cat]["questions"], cat
    assert undated["current"]["right"] == undated["current"]["questions"]
    for cat in ("previous", "changed-when"):
        assert undated[cat]["right"] == 0, cat
        assert undated[cat]["misses"] == undated[cat]["questions"], cat


def test_silent_condensation_makes_the_store_smaller_and_its_reads_costlier(
    small: Any, tmp_path: Path
) -> None:
    result = mechanism.condensation(small, tmp_path)
    kept, condensed = result["preserved"], result["condensed"]
    previous = small.categories()["previous"]
    assert condensed["store_bytes"] < 0.8 * kept["store_bytes"]
    assert condensed["bytes_read_per_q"] > 3 * kept["bytes_read_per_q"]
    assert kept["misses"] == 0
    assert condensed["misses"] == condensed["sweeps"] == previous  # the history it merged away
    assert condensed["right"] == kept["right"] - previous


def test_a_misfiling_router_is_cheaper_and_confidently_wrong(small: Any, tmp_path: Path) -> None:
    result = mechanism.misfiling(small, tmp_path, rates=(0.0, 0.5))
    clean, misfiled = result["0.00"], result["0.50"]
    bad = misfiled["misfiled_keys"]
    assert bad >= 2
    assert clean["current"]["wrong"] == 0
    assert clean["check_supersede_problems"] == 0
    current = misfiled["current"]
    assert current["wrong"] == bad  # the stale line stands as live ...
    assert current["misses"] == 0  # ... and nothing looks missing
    assert current["bytes_read_per_q"] < clean["current"]["bytes_read_per_q"]
    assert misfiled["check_supersede_problems"] == bad  # memdir check names every one
