"""A short OpenAI agent with long-term memory: memdir's tools, its core-memory block, a tool loop.

    OPENAI_API_KEY=... python examples/openai_agent.py --root ./memory "I moved to Lisbon in May."

Works with any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp): pass --base-url.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from openai import OpenAI

from memdir import Memory

SYSTEM = (
    "You are an assistant with a long-term memory: markdown files under /memories, edited with the "
    "memory tools. Before answering, look up what you need; when the user tells you something worth "
    "keeping, record it (one fact per line, in the file of its subject). Your core memory follows.\n\n"
)


def run(
    client: OpenAI, memory: Memory, user_message: str, *, model: str = "gpt-5-mini", max_rounds: int = 12
) -> str:
    """One user turn: let the model call memory tools until it answers; returns the answer."""
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM + memory.context()},
        {"role": "user", "content": user_message},
    ]
    tools: Any = memory.tools("manage", format="openai")
    for _ in range(max_rounds):
        reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
        msg = reply.choices[0].message
        messages.append(msg.model_dump(exclude_none=True))
        if not msg.tool_calls:
            return msg.content or ""
        for call in msg.tool_calls:
            if call.type != "function":
                continue
            result = memory.call(call.function.name, call.function.arguments)  # JSON string is fine
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
    raise RuntimeError(f"no answer after {max_rounds} rounds of tool calls")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("message")
    ap.add_argument("--root", default="./memory")
    ap.add_argument("--model", default="gpt-5-mini")
    ap.add_argument("--base-url", default=None)
    args = ap.parse_args()
    key, base_url = os.environ.get("OPENAI_API_KEY"), args.base_url or os.environ.get("OPENAI_BASE_URL")
    if not key and not base_url:  # checked before Memory(...) makes the store
        sys.exit(
            "openai_agent.py: set OPENAI_API_KEY in the environment (or give --base-url, a local "
            "OpenAI-compatible server); nothing was created"
        )
    client = OpenAI(api_key=key or "unused", base_url=base_url)  # a local server takes any key
    print(run(client, Memory(args.root), args.message, model=args.model))


if __name__ == "__main__":
    main()
