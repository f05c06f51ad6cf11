"""memdir's roles played by an OpenAI model (or any OpenAI-compatible server).

    OPENAI_API_KEY=... python examples/memory_openai.py ./memory

The key is read from the environment only. For vLLM, Ollama or llama.cpp, name the model as
`openai/<model>` and set OPENAI_BASE_URL to the server's /v1 URL.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memdir import Memory

MODEL = "openai/gpt-5-mini"


def main(root: str, model: Any = MODEL) -> str:
    memory = Memory(root)
    added = memory.add(
        [
            {"role": "user", "content": "I switched from vegetarian to vegan in May."},
            {"role": "assistant", "content": "Noted: vegan since May."},
        ],
        model=model,
    )
    print(added.summary, f"{added.usage.prompt} prompt tokens")
    answer = memory.ask("What does the user eat now?", model=model)
    print(answer.answer, [c.text for c in answer.citations], f"{answer.usage.prompt} prompt tokens")
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
    main(sys.argv[1] if len(sys.argv) > 1 else "./memory")
