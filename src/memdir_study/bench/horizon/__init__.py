"""The horizon bench's year: a simulated life woven with real conversations, and its truth.

`kinds.py` holds what a life's facts are and the many ways they are said; `life.py` plans one
life (who, what holds when, what is said when); `weave.py` brings real LoCoMo and REALTALK
sessions in, re-dated; `year.py` lays them all out as a year of daily-ish sessions with the
ground truth the bench scores against. Building a store over the year and scoring it is the
eval's (`memdir_study/eval/horizon/`); the command is `memdir study bench horizon`.
"""

from __future__ import annotations

from memdir_study.bench.horizon.year import Session, Year, build_year

__all__ = ["Session", "Year", "build_year"]
