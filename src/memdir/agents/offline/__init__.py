"""Offline baseline policies: management, search and multiple choice played with no model.

They act through the same harness as a model would, so their effort and bytes are metered the
same way. They are baselines; every output they make says so (`model: offline`, `baseline: true`).

- `curator.py`: the management role, filing by person, topic and day, with keyed facts in one
  section per attribute; `extract.py` the keyed facts it reads off a turn (only values it can
  stand behind), `speakers.py` who is a person (the user by name, never the assistant;
  docs/conventions.md, "People"); `mend.py` its answer to `--feedback health`, by rule (a stale
  live value struck through with its end date, a dangling reference pointed at the moved file
  or cut, a folder over the fanout cap sharded by its own categories in `shard.py`), every change
  a harness call through `edits.py`.
- `searcher.py`: the lexical searcher, which navigates by listings and `MEMORY.md` indexes
  (`navigate.py`) before it reads; `chooser.py`: the option chooser for multiple choice.
- `text.py`: slugs and topic keys (the words themselves are `memdir.words`).
"""

from memdir.agents.offline.chooser import Choice, choose
from memdir.agents.offline.curator import Curator
from memdir.agents.offline.extract import keyed_facts
from memdir.agents.offline.searcher import LexicalSearcher, SearchResult

OFFLINE_LABEL = {"model": "offline", "baseline": True}

__all__ = ["OFFLINE_LABEL", "Choice", "Curator", "LexicalSearcher", "SearchResult", "choose", "keyed_facts"]
