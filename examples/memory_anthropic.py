"""memdir's roles played by a Claude model, asynchronously (AsyncMemory) inside an app's loop.

ANTHROPIC_API_KEY=... python examples/memory_anthropic.py ./memory
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from memdir import AsyncMemory


async def main(root: str, model: Any = "anthropic/claude-haiku-4-5") -> str:
    memory = AsyncMemory(root)
    await memory.add("Our team standup moved to 9:30 on Tuesdays.", model=model)
    hits = await memory.search("standup time", k=3)
    print([f"{h.path}:{h.start_line}" for h in hits])
    answer = await memory.ask("When is the standup?", model=model)
    print(answer.answer, [c.text for c in answer.citations])
    return answer.answer


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "./memory"))
