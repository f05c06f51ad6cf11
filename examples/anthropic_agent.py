"""A short Claude agent with long-term memory: memdir's tools, its core-memory block, a tool loop.

    ANTHROPIC_API_KEY=... python examples/anthropic_agent.py --root ./memory "I moved to Lisbon in May."

(To keep an app built on Anthropic's own memory tool, swap `BetaLocalFilesystemMemoryTool` for
`memory.anthropic_memory_tool()` in `client.beta.messages.tool_runner(...)` instead.)
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from anthropic import Anthropic

from memdir import Memory

SYSTEM = (
    "You are an assistant with a long-term memory: markdown files under /memories, edited with the "
    "memory tools. Before answering, look up what you need; when the user tells you something worth "
    "keeping, record it (one fact per line, in the file of its subject). Your core memory follows.\n\n"
)


def run(
    client: Anthropic,
    memory: Memory,
    user_message: str,
    *,
    model: str = "claude-sonnet-5",
    max_rounds: int = 12,
) -> str:
    """One user turn: let Claude call memory tools until it answers; returns the answer."""
    messages: list[Any] = [{"role": "user", "content": user_message}]
    tools: Any = memory.tools("manage", format="anthropic")
    system = SYSTEM + memory.context()  # fixed for the turn, so the prompt prefix stays cacheable
    for _ in range(max_rounds):
        reply = client.messages.create(
            model=model, max_tokens=4096, system=system, messages=messages, tools=tools
        )
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
        )
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in reply.content if b.type == "text")
        results = []
        for use in uses:
            result = memory.call(use.name, dict(use.input))
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use.id,
                    "content": result.text,
                    "is_error": result.is_error,
                }
            )
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {max_rounds} rounds of tool calls")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("message")
    ap.add_argument("--root", default="./memory")
    ap.add_argument("--model", default="claude-sonnet-5")
    args = ap.parse_args()
    if not os.environ.get("ANTHROPIC_API_KEY"):  # checked before Memory(...) makes the store
        sys.exit("anthropic_agent.py: set ANTHROPIC_API_KEY in the environment; nothing was created")
    print(run(Anthropic(), Memory(args.root), args.message, model=args.model))


if __name__ == "__main__":
    main()
