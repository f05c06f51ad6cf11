"""Benchmark loaders: each turns a source into a :class:`Sample` (turns with locators, chunks,
questions). This package imports nothing of memdir but `memdir.stream` and `memdir.errors`, so
builders and the eval runner can use it without pulling in the harness.
"""

from __future__ import annotations

from collections.abc import Callable

from memdir.bench.data import DataUnavailable, UnknownSample
from memdir.bench.types import Fact, Question, Sample

DEFAULTS = {
    "locomo": "conv-50",
    "realtalk": "Chat_10_Fahim_Muhhamed",
    "personamem": "pm_32k_18_246eaab7_e185",
    "generated": "gen-s42",
}


def _loader(benchmark: str) -> Callable[[str], Sample]:
    if benchmark == "locomo":
        from memdir.bench import locomo

        return locomo.load
    if benchmark == "realtalk":
        from memdir.bench import realtalk

        return realtalk.load
    if benchmark == "personamem":
        from memdir.bench import personamem

        return personamem.load
    if benchmark == "generated":
        from memdir.bench import generated

        return generated.load
    raise UnknownSample(f"unknown benchmark {benchmark!r}; choose one of {', '.join(DEFAULTS)}")


def load_sample(benchmark: str, sample_id: str | None = None) -> Sample:
    """One sample by benchmark name and id (the study's default sample when id is None)."""
    loader = _loader(benchmark)
    return loader(sample_id or DEFAULTS[benchmark])


__all__ = ["DEFAULTS", "DataUnavailable", "Fact", "Question", "Sample", "UnknownSample", "load_sample"]
