"""The split curator's extraction call on the local model, under three ways of serving it.

    python benchmarks/grammar_sampling.py [--conversation conv-26] [--chunks 6]
        [--out runs/bench-grammar-sampling]

Needs `make local-model` and `MEMDIR_DATA`. The same chunks of a LoCoMo conversation (sessions
1-5), each one `split.extract` call held to its JSON schema at temperature 0, go to three
llama.cpp servers in turn, one at a time:
- `library`: llama-cpp-python's own sampling (the grammar run over the whole vocabulary at every
  token) and no drafts;
- `grammar-first`: the drawn token checked against the grammar first (`models/grammar.py`);
- `grammar-first+drafts`: and the text the schema forces drafted, verified in one batch
  (`models/forced.py`).
Printed side by side: median seconds a chunk, output tokens a second, and whether each reply is
byte-identical to the library's (both changes are meant to leave the reply as it was). Target
(issue 32): the split curator at most 30 s a chunk, median, on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bar_chart, machine, write_json
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from memdir.agents.split.extract import MAX_OUTPUT, messages, schema
from memdir.models import GenerateConfig, get_model
from memdir.models.llama_server import GRAMMAR_EVERY_TOKEN, NO_DRAFTS
from memdir.models.local import QWEN_CODER_1_5B, LocalServer, missing_reason
from memdir_study.bench import load_sample
from memdir_study.bench.types import parse_sessions

SETUPS: dict[str, dict[str, str]] = {
    "library": {GRAMMAR_EVERY_TOKEN: "1", NO_DRAFTS: "1"},
    "grammar-first": {GRAMMAR_EVERY_TOKEN: "0", NO_DRAFTS: "1"},
    "grammar-first+drafts": {GRAMMAR_EVERY_TOKEN: "0", NO_DRAFTS: "0"},
}


async def serve(setup: str, chunks: list[Any], progress: Progress) -> list[dict[str, Any]]:
    server = LocalServer(QWEN_CODER_1_5B)
    with mock.patch.dict(os.environ, SETUPS[setup]):  # the server process inherits them
        server.start()
    rows: list[dict[str, Any]] = []
    task = progress.add_task(setup, total=len(chunks))
    try:
        model = get_model("local", base_url=server.base_url)
        # The prompt prefix is evaluated once, outside the timed chunks (as in a run).
        warm = GenerateConfig(max_tokens=1, temperature=0.0)
        await model.generate(messages(chunks[0]), [], warm)
        for chunk in chunks:
            config = GenerateConfig(
                answer_schema=schema(chunk), require_schema=True,
                max_tokens=MAX_OUTPUT, temperature=0.0,
            )  # fmt: skip
            start = time.perf_counter()
            out = await model.generate(messages(chunk), [], config)
            seconds = time.perf_counter() - start
            rows.append(
                {"seconds": round(seconds, 2), "output": out.usage.output, "reply": out.message.content}
            )
            progress.advance(task)
    finally:
        server.stop()
    return rows


async def run(conversation: str, n: int) -> dict[str, Any]:
    sample = load_sample("locomo", conversation).sliced(*parse_sessions("1-5"))
    chunks = sample.chunks()[:n]
    result: dict[str, Any] = {"machine": machine(), "conversation": conversation, "chunks": len(chunks)}
    with Progress() as progress:
        for setup in SETUPS:
            result[setup] = await serve(setup, chunks, progress)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="conv-26")
    parser.add_argument("--chunks", type=int, default=6)
    parser.add_argument("--out", type=Path, default=Path("runs/bench-grammar-sampling"))
    args = parser.parse_args()
    reason = missing_reason(QWEN_CODER_1_5B)
    if reason is not None:
        sys.exit(reason)
    result = asyncio.run(run(args.conversation, args.chunks))
    base = [r["reply"] for r in result["library"]]
    table = Table(title=f"split extraction, {result['chunks']} chunks of {args.conversation}")
    for col in ("setup", "median s/chunk", "output tok/s", "vs library", "replies identical"):
        table.add_column(col)
    medians: dict[str, float] = {}
    for setup in SETUPS:
        rows = result[setup]
        medians[setup] = statistics.median(r["seconds"] for r in rows)
        rate = sum(r["output"] for r in rows) / sum(r["seconds"] for r in rows)
        same = sum(r["reply"] == b for r, b in zip(rows, base, strict=True))
        result[f"{setup}_summary"] = {
            "median_seconds": medians[setup], "tokens_per_second": rate, "identical": same,
        }  # fmt: skip
        table.add_row(
            setup, f"{medians[setup]:.1f}", f"{rate:.1f}", f"{medians['library'] / medians[setup]:.2f}x",
            f"{same}/{len(rows)}",
        )  # fmt: skip
    Console().print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(args.out / "grammar_sampling.json", result)
    bar_chart(
        args.out / "grammar_sampling.png", "split extraction: seconds a chunk (median)",
        list(SETUPS), {"median s/chunk": [medians[s] for s in SETUPS]}, "seconds",
    )  # fmt: skip
    print(f"saved {args.out / 'grammar_sampling.json'} and grammar_sampling.png")


if __name__ == "__main__":
    main()
