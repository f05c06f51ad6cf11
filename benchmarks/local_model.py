"""The local model, measured: raw speed, seconds per role episode, and prompt caching on vs off.

    python benchmarks/local_model.py [--reps 3] [--off-reps 1] [--round-cap N] [--quick]
        [--out runs/bench-local-model]

Needs `make local-model`. One llama.cpp server with prompt caching on serves, in order:
- speed: prompt tokens/s (a ~2,000-token prompt, one output token) and generation tokens/s;
- management episodes on the first `reps` 8-turn chunks of LoCoMo conv-50, into one store;
- search episodes over the verbatim dump of conv-50 sessions 1-4, on the first `reps` questions
  whose evidence lies there, and a correctness-judge call on each answer.
Then a second server with caching off (the prefix forgotten before every request) answers the
first `off-reps` of the same search episodes (each of its rounds re-reads the whole prompt, so
it is slow), so the cached share and the seconds stand side by side. Targets (the
issue's): management and search medians at most 60 s, cached share of multi-round input >= 50%.
The figures so far are saved after each phase (local_model.partial.json).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import bar_chart, machine, write_json
from rich.console import Console
from rich.table import Table

from memdir.agents import answer_question, manage_chunk
from memdir.models import ChatMessage, GenerateConfig, Model, Usage, get_model
from memdir.models.local import QWEN_CODER_1_5B, LocalServer, missing_reason
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.wiring import open_store
from memdir_study.bench import load_sample
from memdir_study.eval.judges import judge_correctness
from memdir_study.eval.runner import _JudgeModel
from memdir_study.variants.dump import write_dump


def _episode(
    kind: str, seconds: float, usage: Usage, rounds: int, calls: int, **extra: Any
) -> dict[str, Any]:
    return {
        "kind": kind,
        "seconds": round(seconds, 2),
        "rounds": rounds,
        "tool_calls": calls,
        "prompt": usage.prompt,
        "cached": usage.input_cached,
        "output": usage.output,
        **extra,
    }


async def speed(model: Model) -> dict[str, float]:
    text = " ".join(
        f"Note {i}: the lake near town {i} has {i * 3} ducks and {i + 7} swans." for i in range(110)
    )
    cfg = GenerateConfig(max_tokens=1, temperature=0.0)
    out = await model.generate([ChatMessage("user", f"{text}\nReply OK.")], [], cfg)
    prompt_tps = out.usage.input_uncached / out.usage.seconds
    prompt_tokens = out.usage.input_uncached  # what the prompt speed is over
    cfg = GenerateConfig(max_tokens=200, temperature=0.0)
    out = await model.generate(
        [ChatMessage("user", "Write a long story about a lighthouse keeper.")], [], cfg
    )
    return {
        "prompt_tokens_per_s": round(prompt_tps, 1),
        "generation_tokens_per_s": round(out.usage.output / out.usage.seconds, 1),
        "prompt_tokens": prompt_tokens,
        "generated_tokens": out.usage.output,
    }


async def management(model: Model, reps: int, root: Path) -> list[dict[str, Any]]:
    sample = load_sample("locomo", "conv-50")
    store = open_store(root, create=True)
    spec.init(store)
    rows = []
    for chunk in sample.chunks()[:reps]:
        start = time.perf_counter()
        out = await manage_chunk(model, store, chunk, variant="agent-curated")
        ep = out.episode
        assert ep is not None
        rows.append(
            _episode(
                "management",
                time.perf_counter() - start,
                ep.usage,
                ep.rounds,
                ep.tool_calls,
                writes=out.extra["writes"],
                turns=len(chunk.turns),
            )
        )
    return rows


def dump_store(root: Path) -> tuple[Store, list[Any]]:
    sample = load_sample("locomo", "conv-50").sliced(1, 4)
    store = open_store(root, create=True)
    with store.step("dump"):
        write_dump(store, sample)
    return store, sorted(sample.questions, key=lambda q: q.order)


async def searches(model: Model, store: Store, questions: list[Any], judge: bool) -> list[dict[str, Any]]:
    rows = []
    for q in questions:
        start = time.perf_counter()
        out = await answer_question(model, store, q.question, variant="verbatim-dump")
        ep = out.episode
        assert ep is not None
        rows.append(
            _episode(
                "search",
                time.perf_counter() - start,
                ep.usage,
                ep.rounds,
                ep.tool_calls,
                question=q.id,
                answer=out.answer,
                gold=q.gold,
            )
        )
        if judge:
            start = time.perf_counter()
            verdict = await judge_correctness(_JudgeModel(model), q.question, q.gold, out.answer or "")
            used = model.calls[-1].usage  # the judge is one call
            rows.append(_episode("judge", time.perf_counter() - start, used, 1, 0, verdict=verdict.label))
    return rows


def _median(rows: list[dict[str, Any]], kind: str, key: str = "seconds") -> float | None:
    vals = [r[key] for r in rows if r["kind"] == kind]
    return round(statistics.median(vals), 2) if vals else None


def _share(rows: list[dict[str, Any]], kind: str) -> float | None:
    multi = [r for r in rows if r["kind"] == kind and r["rounds"] > 1]
    prompt = sum(r["prompt"] for r in multi)
    return round(sum(r["cached"] for r in multi) / prompt, 3) if prompt else None


async def run(reps: int, off_reps: int, round_cap: int | None, tmp: Path, out: Path) -> dict[str, Any]:
    """Every phase in order; the figures so far are saved after each (a phase can take long)."""
    on = get_model("local")
    on.api.round_cap = round_cap
    result: dict[str, Any] = {
        "machine": machine(),
        "model": QWEN_CODER_1_5B.alias,
        "reps": reps,
        "off_reps": off_reps,
        "round_cap": round_cap,
    }

    def save(phase: str) -> None:
        result["done"] = [*result.get("done", []), phase]
        write_json(out / "local_model.partial.json", result)

    result["speed"] = await speed(on)
    save("speed")
    result["management"] = await management(on, reps, tmp / "curated")
    save("management")
    store, questions = dump_store(tmp / "dump")
    result["search_on"] = await searches(on, store, questions[:reps], judge=True)
    save("search_on")
    off_server = LocalServer(QWEN_CODER_1_5B, prefix_cache=False)
    off_server.start()
    try:
        off = get_model("local", base_url=off_server.base_url)
        off.api.round_cap = round_cap
        result["search_off"] = await searches(off, store, questions[:off_reps], judge=False)
    finally:
        off_server.stop()
    save("search_off")
    return result


def report(result: dict[str, Any], out: Path) -> None:
    console = Console()
    sp = result["speed"]
    console.print(
        f"prompt {sp['prompt_tokens_per_s']} tok/s, generation {sp['generation_tokens_per_s']} tok/s"
    )
    rows_on = result["management"] + result["search_on"]
    table = Table(title=f"{result['model']}: seconds per episode (median of {result['reps']})")
    for col in (
        "episode",
        "median s",
        "target s",
        "rounds (median)",
        "tool calls (median)",
        "cached share, multi-round",
    ):
        table.add_column(col)
    for kind, target in (("management", 60), ("search", 60), ("judge", None)):
        table.add_row(
            kind,
            str(_median(rows_on, kind)),
            str(target or "-"),
            str(_median(rows_on, kind, "rounds")),
            str(_median(rows_on, kind, "tool_calls")),
            str(_share(rows_on, kind)),
        )
    console.print(table)
    # like for like: the episodes both servers answered (the first `off_reps` questions)
    paired = {r["question"] for r in result["search_off"] if r["kind"] == "search"}
    on_rows = [r for r in result["search_on"] if r["kind"] == "search" and r["question"] in paired]
    cache = Table(title="prompt caching: the same search episodes, on vs off")
    for col in ("caching", "median s", "cached share, multi-round", "prompt tokens"):
        cache.add_column(col)
    for label, rows in (("on", on_rows), ("off", result["search_off"])):
        cache.add_row(
            label,
            str(_median(rows, "search")),
            str(_share(rows, "search")),
            str(sum(r["prompt"] for r in rows if r["kind"] == "search")),
        )
    console.print(cache)
    on, off = _median(on_rows, "search"), _median(result["search_off"], "search")
    result["summary"] = {
        "management_median_s": _median(rows_on, "management"),
        "search_median_s": _median(rows_on, "search"),
        "search_median_s_cache_on_paired": on,
        "judge_median_s": _median(rows_on, "judge"),
        "search_median_s_cache_off": off,
        "cache_speedup": round(off / on, 2) if on and off else None,
        "cached_share_management_multi_round": _share(rows_on, "management"),
        "cached_share_search_multi_round": _share(rows_on, "search"),
    }
    console.print(result["summary"])
    write_json(out / "local_model.json", result)
    bar_chart(
        out / "local_model.png",
        "seconds per episode (median)",
        ["management", "search", "judge"],
        {
            "cache on": [_median(rows_on, k) or 0 for k in ("management", "search", "judge")],
            "cache off": [0, off or 0, 0],
        },
        "seconds",
    )
    console.print(f"written: {out / 'local_model.json'}, {out / 'local_model.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one episode of each")
    parser.add_argument(
        "--off-reps",
        type=int,
        default=1,
        help="search episodes repeated with caching off (slow: each round re-reads the prompt)",
    )
    parser.add_argument(
        "--round-cap",
        type=int,
        default=None,
        help="lower every role's round cap (eval's --round-cap); recorded",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/bench-local-model"))
    args = parser.parse_args()
    reason = missing_reason()
    if reason:
        raise SystemExit(f"local_model.py: {reason}")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        reps = 1 if args.quick else args.reps
        result = asyncio.run(run(reps, min(args.off_reps, reps), args.round_cap, Path(tmp), args.out))
    report(result, args.out)


if __name__ == "__main__":
    main()
