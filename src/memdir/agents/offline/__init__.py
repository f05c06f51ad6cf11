"""Offline baseline policies: management, search and multiple choice played with no model.

They act through the same harness as a model would, so their effort and bytes are metered the
same way. They are baselines; every output they make says so (`model: offline`, `baseline: true`).
"""

from memdir.agents.offline.chooser import Choice, choose
from memdir.agents.offline.curator import Curator
from memdir.agents.offline.extract import keyed_facts
from memdir.agents.offline.searcher import LexicalSearcher, SearchResult

OFFLINE_LABEL = {"model": "offline", "baseline": True}

__all__ = ["OFFLINE_LABEL", "Choice", "Curator", "LexicalSearcher", "SearchResult", "choose", "keyed_facts"]
