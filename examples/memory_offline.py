"""memdir in three lines, with no model at all: add, search, ask.

    python examples/memory_offline.py ./memory

The offline baselines play both roles (the curator files what it is told by person, topic and
day; the searcher navigates the store's indexes), so this runs anywhere, with no key.
"""

from __future__ import annotations

import sys
from typing import Any

from memdir import Memory


def main(root: str, model: Any = "offline") -> str:
    memory = Memory(root)
    memory.add([{"role": "user", "content": "I moved to Lisbon in May 2024."}], model=model)
    for hit in memory.search("where does the user live", k=3):
        print(f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.heading}  ({hit.score:.3f})")
    answer = memory.ask("Where does the user live?", model=model)
    print(answer.answer, [c.text for c in answer.citations])
    return answer.answer


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "./memory")
