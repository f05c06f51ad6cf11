"""The typed records that cross rooms keep the JSON they always wrote, key for key, and a
record missing a field fails where it is built, naming the field."""

from __future__ import annotations

import json
from typing import get_type_hints

from memdir.models.usage import Bounds, BoundsRecord, Usage, UsageRecord, spent


def test_usage_record_is_the_usage_fields_and_reads_back() -> None:
    u = Usage(
        input_uncached=10, input_cached=4, output=7, reasoning=2, cache_write=1, calls=3, seconds=1.23456789
    )
    record = u.as_dict()
    assert list(record) == list(get_type_hints(UsageRecord)) and record["seconds"] == 1.234568
    assert Usage.from_dict(json.loads(json.dumps(record))) == Usage(10, 4, 7, 2, 1, 3, 1.234568)
    assert Usage.from_dict({"output": 5}) == Usage(output=5)  # an older record's missing field counts 0
    assert spent(Usage(output=2, seconds=0.5), u) == Usage(10, 4, 5, 2, 1, 3, 1.234568 - 0.5)


def test_bounds_record_carries_the_caching_efficiency() -> None:
    record = Bounds(100, 60, 40).as_dict()
    assert list(record) == list(get_type_hints(BoundsRecord))
    assert record == {"no_cache": 100, "measured": 60, "perfect": 40, "caching_efficiency": 2 / 3}
