"""Search by section at scale: query latency per mode, one-file update, and the freshness check.

Two synthetic stores (benchmarks/_common.make_store, words drawn per topic folder):
- `--sections` units (default 50,000: 10,000 notes of a title and 4 sections) for the query
  and update figures: file-level BM25, section BM25, dense and hybrid side by side, over the
  same queries (three words of one section each); the one-file update is a note rewritten on
  disk and brought up to date (`SearchIndex.apply`, file index, units and vectors), with and
  without the section layer;
- `--files` notes (default 50,000) for the freshness check every search makes first: the
  stat walk (`MEMDIR_WATCH=0`) against draining the change notices (search/watch.py), with
  nothing changed and with one file changed.

Targets (the issue's): query p50 <= 10 ms at 50,000 sections, one-file update <= 30 ms,
freshness check <= 1 ms at 50,000 files.

    python benchmarks/hybrid_scale.py [--sections 50000] [--files 50000] [--queries 100] [--quick]

Writes runs/hybrid_scale/hybrid_scale.json.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, make_store, write_json
from rich.console import Console
from rich.table import Table

from memdir.search.embed import configured, get_embedder, threads
from memdir.search.hybrid import search_sections
from memdir.search.index import SearchIndex
from memdir.search.units import split_units
from memdir.store.store import Store

SECTIONS_PER_NOTE = 4  # plus the note's title unit


def _ms(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": round(statistics.median(ms), 3),
        "p99_ms": round(ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))], 3),
        "n": len(ms),
    }


def _queries(root: Path, n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    notes = sorted(root.glob("topic-*/note-*.md"))
    out = []
    for path in rng.sample(notes, min(n, len(notes))):
        fact = [ln for ln in path.read_text().split("\n") if ln.startswith("- ")]
        words = rng.choice(fact).removeprefix("- ").split()[:-1]
        out.append(" ".join(rng.sample(words, 3)))
    return out


def queries_and_updates(sections: int, n_queries: int, console: Console) -> dict[str, Any]:
    notes = max(1, sections // (SECTIONS_PER_NOTE + 1))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        make_store(root, notes, folders=20, sections=SECTIONS_PER_NOTE)
        index = SearchIndex(Store(root))
        start = time.perf_counter()
        index.sync()
        built_files = time.perf_counter() - start
        console.print(f"file index of {notes:,} notes: {built_files:.1f} s; embedding every section…")
        start = time.perf_counter()
        units = index.enable_units(dense=True)
        built_units = time.perf_counter() - start
        assert index.units is not None
        n_units = index.units.db.execute("SELECT count(*) FROM units").fetchone()[0]
        console.print(f"{n_units:,} units with vectors in {built_units:.1f} s ({units.files:,} files)")
        queries = _queries(root, n_queries)
        get_embedder().encode(["warm up"])
        modes: dict[str, dict[str, float]] = {}
        samples: dict[str, list[float]] = {"files-bm25": [], "bm25": [], "dense": [], "hybrid": []}
        for q in queries:  # interleaved, so drift of the machine hits every mode alike
            for mode in samples:
                start = time.perf_counter()
                if mode == "files-bm25":
                    index.search(q, top_k=10)
                else:
                    search_sections(index, q, mode, top_k=10)
                samples[mode].append(time.perf_counter() - start)
        modes = {m: _ms(s) for m, s in samples.items()}
        start = time.perf_counter()
        get_embedder().encode(queries)
        encode_ms = (time.perf_counter() - start) * 1000 / len(queries)
        updates: list[float] = []
        encodes: list[float] = []
        notes_on_disk = sorted(root.glob("topic-*/note-*.md"))
        rng = random.Random(5)
        for i in range(30):
            path = rng.choice(notes_on_disk)
            text = path.read_text() + f"- an added line {i} about kettles [S9T{i}]\n"
            path.write_text(text)
            mem = "/memories/" + path.relative_to(root).as_posix()
            start = time.perf_counter()
            index.apply([mem])  # file index, units and vectors, as the search after a tool write does
            updates.append(time.perf_counter() - start)
            start = time.perf_counter()
            get_embedder().encode([t for u in split_units(mem, text) for t in u.embed_texts])
            encodes.append(time.perf_counter() - start)
        index.close()
    return {
        "notes": notes,
        "units": n_units,
        "build_seconds": {"file_index": round(built_files, 2), "units_and_vectors": round(built_units, 2)},
        "query": modes,
        "query_encode_ms": round(encode_ms, 3),
        "update": {"one file, all layers": _ms(updates), "its sections' embedding alone": _ms(encodes)},
    }


def freshness(files: int, console: Console) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        make_store(root, files, folders=50, body="- a fact line [S1T1]\n")
        out: dict[str, Any] = {"files": files}
        for label, watch in (("stat walk", "0"), ("change notices", "1")):
            os.environ["MEMDIR_WATCH"] = watch
            index = SearchIndex(Store(root))
            index.sync()  # the first sync of a process walks either way
            still: list[float] = []
            changed: list[float] = []
            for i in range(20):
                start = time.perf_counter()
                report = index.sync()
                still.append(time.perf_counter() - start)
                assert report.changed == 0
                target = root / f"topic-{i % 50:02d}" / "note-000.md"
                target.write_text(target.read_text() + f"- changed {label} {i}\n")
                start = time.perf_counter()
                report = index.sync()
                changed.append(time.perf_counter() - start)
                assert report.modified == 1, report
            out[label] = {"nothing changed": _ms(still), "one file changed": _ms(changed)}
            index.close()
            console.print(f"freshness, {label}: {out[label]['nothing changed']['p50_ms']} ms")
        os.environ.pop("MEMDIR_WATCH", None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", type=int, default=50_000)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path("runs/hybrid_scale"))
    parser.add_argument("--quick", action="store_true", help="2,000 sections and files, 20 queries")
    args = parser.parse_args()
    if args.quick:
        args.sections, args.files, args.queries = 2000, 2000, 20
    console = Console(stderr=True)
    result: dict[str, Any] = {"machine": machine(), "embedder": configured(), "threads": threads()}
    result["fresh"] = freshness(args.files, console)
    result["search"] = queries_and_updates(args.sections, args.queries, console)
    write_json(args.out / "hybrid_scale.json", result)
    found = result["search"]
    t = Table(title=f"search by section at {found['units']:,} units ({found['notes']:,} notes)")
    for col in ("what", "p50 ms", "p99 ms", "target"):
        t.add_column(col, justify="right")
    for mode, row in result["search"]["query"].items():
        t.add_row(
            f"query, {mode}", str(row["p50_ms"]), str(row["p99_ms"]), "<= 10" if mode == "hybrid" else ""
        )
    for label, row in result["search"]["update"].items():
        target = "<= 30" if label == "one file, all layers" else ""
        t.add_row(f"update, {label}", str(row["p50_ms"]), str(row["p99_ms"]), target)
    for label in ("stat walk", "change notices"):
        for case, row in result["fresh"][label].items():
            target = "<= 1" if label == "change notices" and case == "nothing changed" else ""
            what = f"freshness at {args.files:,} files, {label}, {case}"
            t.add_row(what, str(row["p50_ms"]), str(row["p99_ms"]), target)
    Console().print(t)
    console.print(
        f"query encoding alone: {result['search']['query_encode_ms']} ms; wrote {args.out}/hybrid_scale.json"
    )


if __name__ == "__main__":
    main()
