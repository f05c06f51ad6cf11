"""memdir driven by the local model (Qwen2.5-Coder-1.5B behind llama.cpp), no key, no network.

    make local-model                      # once: the `local` extra and the model
    python examples/memory_local.py ./memory

`model="local"` starts llama.cpp's server on 127.0.0.1 on first use and stops it at exit.
"""

from __future__ import annotations

import sys
from typing import Any

from memdir import Memory


def main(root: str, model: Any = "local") -> str:
    memory = Memory(root)
    added = memory.add("My sister Ana works as a nurse in Porto.", model=model)
    print(added.summary, f"({added.usage.calls} model calls)")
    answer = memory.ask("Where does Ana work?", model=model)
    print(answer.answer, [c.text for c in answer.citations if c.found])
    return answer.answer


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "./memory")
