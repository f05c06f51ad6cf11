"""Benchmark loaders: each turns a source into a :class:`Sample` (turns with locators, chunks,
questions with evidence, defective-gold flags).

LoCoMo, REALTALK, PersonaMem, LongMemEval (one sample per question; its data is not shipped,
and the loader says where to put it) and a generated benchmark (`generated.py`); the skill
setting's ALFWorld in `alfworld.py` (the 140 games, families, chain orders) and
`alfworld_env.py` (one game, with the environment's own success signal). Data comes from
`MEMDIR_DATA`, else a pinned download cache (`data.py`). The loaders import only leaves
(`memdir.stream`, `memdir.errors`, `memdir.conventions`) and the product's chat-log readers,
so builders and the eval runner can use them without pulling in the harness.
"""

from __future__ import annotations

from collections.abc import Callable

from memdir_study.bench.data import DataUnavailable, UnknownSample
from memdir_study.bench.types import Fact, Question, Sample

DEFAULTS = {
    "locomo": "conv-50",
    "realtalk": "Chat_10_Fahim_Muhhamed",
    "personamem": "pm_32k_18_246eaab7_e185",
    "generated": "gen-s42",
}
"""Benchmark -> the study's default sample. LongMemEval has none (500 one-question haystacks,
none privileged), so it is in BENCHMARKS but not here: it is always loaded by question id."""
BENCHMARKS = (*DEFAULTS, "longmemeval")


def _loader(benchmark: str) -> Callable[[str], Sample]:
    if benchmark == "locomo":
        from memdir_study.bench import locomo

        return locomo.load
    if benchmark == "realtalk":
        from memdir_study.bench import realtalk

        return realtalk.load
    if benchmark == "personamem":
        from memdir_study.bench import personamem

        return personamem.load
    if benchmark == "generated":
        from memdir_study.bench import generated

        return generated.load
    if benchmark == "longmemeval":
        from memdir_study.bench import longmemeval

        return longmemeval.load
    raise UnknownSample(f"unknown benchmark {benchmark!r}; choose one of {', '.join(BENCHMARKS)}")


def load_sample(benchmark: str, sample_id: str | None = None) -> Sample:
    """One sample by benchmark name and id (the study's default sample when id is None)."""
    loader = _loader(benchmark)
    if not sample_id and benchmark not in DEFAULTS:
        raise UnknownSample(
            f"{benchmark} has no default sample; name one, e.g. a LongMemEval question_id or "
            "oracle:<question_id> (memdir_study.bench.longmemeval.question_ids() lists them)"
        )
    return loader(sample_id or DEFAULTS[benchmark])


__all__ = [
    "BENCHMARKS",
    "DEFAULTS",
    "DataUnavailable",
    "Fact",
    "Question",
    "Sample",
    "UnknownSample",
    "load_sample",
]
