"""memdir's roles played by a Claude model, asynchronously (AsyncMemory) inside an app's loop.

ANTHROPIC_API_KEY=... python examples/memory_anthropic.py ./memory
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from memdir import AsyncMemory

MODEL = "anthropic/claude-haiku-4-5"


async def main(root: str, model: Any = MODEL) -> str:
    memory = AsyncMemory(root)
    await memory.add("Our team standup moved to 9:30 on Tuesdays.", model=model)
    hits = await memory.search("standup time", k=3)
    print([f"{h.path}:{h.start_line}" for h in hits])
    answer = await memory.ask("When is the standup?", model=model)
    print(answer.answer, [c.text for c in answer.citations])
    return answer.answer


def ready(model: str) -> None:
    """Refuse a model that cannot be called (no key) in one line, before anything is created."""
    from memdir.models import ModelError, get_model

    try:
        get_model(model).api.check_ready()
    except ModelError as exc:
        sys.exit(f"{Path(sys.argv[0]).name}: {exc}; nothing was created")


if __name__ == "__main__":
    ready(MODEL)
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "./memory"))
