"""BM25 index benchmark: memdir's tantivy index side by side with bm25s and rank_bm25.

On N synthetic ~1 KB memory files (default 50,000) it measures build time, query latency
(p50/p99), single-file update latency, the cost of the freshness check every search makes,
and how far memdir's top 10 agrees with bm25s's on the same queries, all with the same
tokenization (memdir's analyzer feeds every engine). rank_bm25 runs on the first 5,000 files
only (it scores every document in Python). Targets: p50 query < 5 ms, update < 20 ms, mean
top-10 overlap with bm25s >= 0.8.

    python benchmarks/bm25_index.py               # 50,000 files
    python benchmarks/bm25_index.py --files 5000  # quick

Writes runs/bm25_index/<UTC time>/ with summary.json, table.txt and bm25_index.png.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from _common import fsync_calibration, timed
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memdir.search import index as index_mod
from memdir.search.analysis import doc_fields, query_terms, terms
from memdir.search.index import SearchIndex
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
console = Console(width=150)


def progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


# -- the synthetic corpus ---------------------------------------------------------------
def vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        n = int(rng.integers(2, 5))
        words["".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), n))] = None
    return list(words)


def corpus(n_files: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    """(memory paths, file texts, vocabulary): Zipf-distributed words, ~1 KB per file, real
    frontmatter, headings and fact lines with locators, spread over 100 topic folders."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng, 30_000)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    p = weights / weights.sum()
    paths, texts = [], []
    draws = rng.choice(len(vocab), size=(n_files, 160), p=p)
    with progress() as prog:
        task = prog.add_task("generate corpus", total=n_files)
        for i in range(n_files):
            w = [vocab[j] for j in draws[i]]
            name = f"{w[0]}-{w[1]}-{i}"
            desc = " ".join(w[2:10])
            facts = [f"- {' '.join(w[k : k + 12])} [S{i % 30 + 1}T{k}]" for k in range(22, 150, 12)]
            body = f"# {w[10].title()} {w[11]}\n{' '.join(w[12:22])}\n## Notes\n" + "\n".join(facts)
            text = f"---\nname: {name}\ndescription: {desc}\nmetadata:\n  topic: {w[150]}\n---\n{body}\n"
            paths.append(f"/memories/topic-{i % 100:02d}/{name}.md")
            texts.append(text)
            prog.advance(task)
    return paths, texts, vocab


def queries(texts: list[str], vocab: list[str], n: int, seed: int) -> list[str]:
    """Queries as a person would type them: 2-4 distinctive words from one file (not among the
    200 commonest, which act as stop words here) and one common word, in mixed case with
    punctuation (the analyzer, not the engine, decides what a term is)."""
    rng = np.random.default_rng(seed + 1)
    common = set(vocab[:200])
    out = []
    for _ in range(n):
        words = [
            w for w in texts[int(rng.integers(0, len(texts)))].split("---\n", 2)[2].split() if w.isalpha()
        ]
        rare = [w for w in words if w.lower() not in common] or words
        picks = [rare[int(rng.integers(0, len(rare)))] for _ in range(int(rng.integers(2, 5)))]
        picks.insert(int(rng.integers(0, len(picks))), vocab[int(rng.integers(0, 200))])
        out.append(" ".join(picks).title() + "?")
    return out


def write_files(root: Path, paths: list[str], texts: list[str]) -> None:
    with progress() as prog:
        task = prog.add_task(f"write {len(paths)} files", total=len(paths))
        for p, t in zip(paths, texts, strict=True):
            disk = root / p.removeprefix("/memories/")
            disk.parent.mkdir(parents=True, exist_ok=True)
            disk.write_text(t, encoding="utf-8")
            prog.advance(task)


# -- measuring --------------------------------------------------------------------------
def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] * 1000


def latencies(
    label: str, qs: list[str], run: Callable[[str], list[str]]
) -> tuple[list[float], list[list[str]]]:
    times: list[float] = []
    results: list[list[str]] = []
    for q in qs[:5]:  # warm caches and lazy compilation
        run(q)
    with progress() as prog:
        task = prog.add_task(label, total=len(qs))
        for q in qs:
            t, res = timed(lambda q=q: run(q))
            times.append(t)
            results.append(res)
            prog.advance(task)
    return times, results


def overlap(a: list[list[str]], b: list[list[str]], k: int = 10) -> float:
    vals = [len(set(x[:k]) & set(y[:k])) / max(1, min(k, len(y))) for x, y in zip(a, b, strict=True) if y]
    return statistics.fmean(vals) if vals else float("nan")


def overlap_up_to_ties(
    qs: list[str],
    mine: list[list[str]],
    ref: list[list[str]],
    scores: Callable[[str], dict[str, float]],
    k: int = 10,
) -> float:
    """Like :func:`overlap`, but a file also agrees when the reference scores it as high as its
    own k-th result: equal scores at the cut-off are ordered arbitrarily by either engine."""
    vals = []
    for q, x, y in zip(qs, mine, ref, strict=True):
        if not y:
            continue
        s = scores(q)
        cut = min(s[p] for p in y[:k]) - 1e-4
        vals.append(sum(1 for p in x[:k] if s.get(p, 0.0) >= cut) / min(k, len(y)))
    return statistics.fmean(vals) if vals else float("nan")


def flat_tokens(path: str, text: str) -> list[str]:
    """The whole file as one bag of terms: what bm25s and rank_bm25 index."""
    return terms(doc_fields(path.rsplit("/", 1)[1], text).whole)


def memdir_run(root: Path, qs: list[str], n_updates: int, texts: list[str]) -> dict[str, Any]:
    store = open_store(root)
    idx = SearchIndex.for_store(store)
    build_s, report = timed(idx.rebuild)
    size_mb = sum(f.stat().st_size for f in (root / ".memdir" / "index").rglob("*") if f.is_file()) / 1e6
    q_times, results = latencies(
        "memdir query", qs, lambda q: [h.path for h in idx.search(q, top_k=10, sync=False)]
    )
    saved = dict(index_mod.BOOSTS)
    index_mod.BOOSTS["signage"] = 0.0
    _, plain = latencies(
        "memdir query (no boosts)", qs, lambda q: [h.path for h in idx.search(q, sync=False)]
    )
    index_mod.BOOSTS.update(saved)
    sync_times = [timed(idx.sync)[0] for _ in range(5)]
    tool = Harness(store, "search-bm25")
    tool_times = [timed(lambda q=q: tool.call("bm25_full_search", {"query": q}))[0] for q in qs[:30]]
    # single-file updates: edit a file with plain I/O, then bring the index in step with it
    rng = np.random.default_rng(7)
    files = sorted(store.snapshot())
    upd: list[float] = []
    upd_cpu: list[float] = []
    with progress() as prog:
        task = prog.add_task("memdir update", total=n_updates)
        for i in range(n_updates):
            path = files[int(rng.integers(0, len(files)))]
            disk = root / path.removeprefix("/memories/")
            disk.write_text(disk.read_text(encoding="utf-8") + f"- updated fact number {i} [S99T{i}]\n")
            cpu = time.process_time()
            upd.append(timed(lambda path=path: idx.apply([path]))[0])
            upd_cpu.append(time.process_time() - cpu)  # all threads of this process
            prog.advance(task)
    manage = Harness(store, "manage")
    tool_upd = []
    for i in range(20):
        path = files[int(rng.integers(0, len(files)))]
        args = {"path": path, "insert_line": 7, "insert_text": f"- tool-made fact zqx{i}"}
        tool_upd.append(timed(lambda args=args: manage.call("insert", args))[0])
        found = [h.path for h in idx.search(f"zqx{i}", sync=False)]
        assert found == [path], f"a tool write did not reach the index: {found} != {path}"
    return {
        "build_s": build_s,
        "files": report.files,
        "index_mb": size_mb,
        "query_ms": (pct(q_times, 0.5), pct(q_times, 0.99)),
        "update_ms": (pct(upd, 0.5), pct(upd, 0.99)),
        "update_cpu_ms": pct(upd_cpu, 0.5),
        "tool_insert_ms": (pct(tool_upd, 0.5), pct(tool_upd, 0.99)),
        "sync_check_ms": pct(sync_times, 0.5),
        "tool_search_ms": (pct(tool_times, 0.5), pct(tool_times, 0.99)),
        "results": results,
        "results_plain": plain,
    }


def bm25s_run(paths: list[str], texts: list[str], qs: list[str]) -> dict[str, Any]:
    import bm25s

    def build() -> Any:
        toks = [flat_tokens(p, t) for p, t in zip(paths, texts, strict=True)]
        r = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        r.index(toks, show_progress=False)
        return r

    build_s, retr = timed(build)
    vocab = retr.vocab_dict

    def run(q: str) -> list[str]:
        qt = [t for t in query_terms(q) if t in vocab]
        if not qt:
            return []
        docs, scores = retr.retrieve([qt], k=10, show_progress=False, n_threads=1)
        return [paths[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def scores(q: str) -> dict[str, float]:
        qt = [t for t in query_terms(q) if t in vocab]
        return dict(zip(paths, retr.get_scores(qt).tolist(), strict=True)) if qt else {}

    q_times, results = latencies("bm25s query", qs, run)
    return {"build_s": build_s, "query_ms": (pct(q_times, 0.5), pct(q_times, 0.99)), "results": results,
            "scores": scores}  # fmt: skip


def rank_bm25_run(paths: list[str], texts: list[str], qs: list[str]) -> dict[str, Any]:
    from rank_bm25 import BM25Okapi

    build_s, model = timed(
        lambda: BM25Okapi([flat_tokens(p, t) for p, t in zip(paths, texts, strict=True)], k1=1.2, b=0.75)
    )

    def run(q: str) -> list[str]:
        scores = model.get_scores(query_terms(q))
        top = np.argsort(-scores)[:10]
        return [paths[i] for i in top if scores[i] > 0]

    q_times, results = latencies("rank_bm25 query", qs, run)
    return {"build_s": build_s, "query_ms": (pct(q_times, 0.5), pct(q_times, 0.99)), "results": results}


# -- reporting --------------------------------------------------------------------------
def fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, tuple):
        return " / ".join(f"{x:.2f}" for x in v)
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="BM25 engines on synthetic ~1 KB memory files (same tokenization)")
    cols = ("engine", "files", "build s", "query p50 / p99 ms", "update p50 / p99 ms",
            "top-10 overlap vs bm25s", "… up to ties")  # fmt: skip
    for col in cols:
        t.add_column(col, justify="left" if col == "engine" else "right")
    for r in rows:
        t.add_row(r["engine"], str(r["files"]), fmt(r["build_s"]), fmt(r["query_ms"]),
                  fmt(r.get("update_ms")), fmt(r.get("overlap")), fmt(r.get("overlap_ties")))  # fmt: skip
    return t


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [5, 2, 3]})
    labels = [f"{r['engine']}\n{r['files']:,} files" for r in rows]
    x = np.arange(len(rows))
    ax1.bar(x - 0.2, [r["query_ms"][0] for r in rows], 0.4, label="p50")
    ax1.bar(x + 0.2, [r["query_ms"][1] for r in rows], 0.4, label="p99")
    ax1.axhline(5, color="red", linestyle="--", linewidth=1, label="target p50 5 ms")
    ax1.set_yscale("log")
    ax1.set_ylabel("query latency (ms, log)")
    ax1.set_xticks(x, labels, fontsize=7)
    ax1.legend(fontsize=8)
    up = [(lab, r) for lab, r in zip(labels, rows, strict=True) if r.get("update_ms")]
    ux = np.arange(len(up))
    ax2.bar(ux - 0.2, [r["update_ms"][0] for _, r in up], 0.4, label="p50")
    ax2.bar(ux + 0.2, [r["update_ms"][1] for _, r in up], 0.4, label="p99")
    ax2.axhline(20, color="red", linestyle="--", linewidth=1, label="target 20 ms")
    ax2.set_yscale("log")
    ax2.set_ylabel("single-file update (ms, log)")
    ax2.set_xticks(ux, [lab for lab, _ in up], fontsize=7)
    ax2.legend(fontsize=8)
    ov = [(lab, r) for lab, r in zip(labels, rows, strict=True) if r.get("overlap") is not None]
    ox = np.arange(len(ov))
    ax3.bar(ox - 0.2, [r["overlap"] for _, r in ov], 0.4, label="exact", color="tab:green")
    ax3.bar(ox + 0.2, [r["overlap_ties"] for _, r in ov], 0.4, label="up to ties", color="tab:olive")
    ax3.axhline(0.8, color="red", linestyle="--", linewidth=1, label="target 0.8")
    ax3.set_ylim(0, 1.05)
    ax3.set_ylabel("mean top-10 overlap with bm25s")
    ax3.set_xticks(ox, [lab for lab, _ in ov], fontsize=7)
    ax3.legend(fontsize=8, loc="lower right")
    fig.suptitle("memdir BM25 index vs bm25s and rank_bm25 (same tokenization)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: Iterable[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=50_000, help="corpus size (default 50,000)")
    ap.add_argument("--queries", type=int, default=200, help="number of queries (default 200)")
    ap.add_argument("--updates", type=int, default=50, help="single-file updates to time (default 50)")
    ap.add_argument(
        "--rank-bm25-files", type=int, default=5_000, help="corpus size for rank_bm25 (default 5,000)"
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None, help="run folder (default runs/bm25_index/<UTC time>)")
    args = ap.parse_args(list(argv) if argv is not None else None)
    out = args.out or Path("runs") / "bm25_index" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out.mkdir(parents=True, exist_ok=True)

    paths, texts, vocab = corpus(args.files, args.seed)
    qs = queries(texts, vocab, args.queries, args.seed)
    small = min(args.rank_bm25_files, args.files)
    tmp = Path(tempfile.mkdtemp(prefix="memdir-bm25-bench-"))
    rows: list[dict[str, Any]] = []
    try:
        write_files(tmp / "big", paths, texts)
        # An index commit is about 20 fsyncs, so one fsync here bounds the update latency.
        fsync_ms = fsync_calibration(tmp / "fsync")["file"]
        m = memdir_run(tmp / "big", qs, args.updates, texts)
        b = bm25s_run(paths, texts, qs)
        m["overlap"] = overlap(m["results"], b["results"])
        m["overlap_ties"] = overlap_up_to_ties(qs, m["results"], b["results"], b["scores"])
        m_plain_overlap = overlap(m["results_plain"], b["results"])
        m_plain_ties = overlap_up_to_ties(qs, m["results_plain"], b["results"], b["scores"])
        rows += [
            {"engine": "memdir (tantivy)", "files": args.files, **m},
            {"engine": "bm25s", "files": args.files, **b},
        ]
        if small < args.files:
            write_files(tmp / "small", paths[:small], texts[:small])
            ms = memdir_run(tmp / "small", qs, min(args.updates, 20), texts[:small])
            bs = bm25s_run(paths[:small], texts[:small], qs)
            ms["overlap"] = overlap(ms["results"], bs["results"])
            ms["overlap_ties"] = overlap_up_to_ties(qs, ms["results"], bs["results"], bs["scores"])
            rows += [
                {"engine": "memdir (tantivy)", "files": small, **ms},
                {"engine": "bm25s", "files": small, **bs},
            ]
        else:
            bs = b
        rk = rank_bm25_run(paths[:small], texts[:small], qs)
        rk["overlap"] = overlap(rk["results"], bs["results"])
        rk["overlap_ties"] = overlap_up_to_ties(qs, rk["results"], bs["results"], bs["scores"])
        rows.append({"engine": "rank_bm25", "files": small, **rk})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    tab = table(rows)
    console.print(tab)
    notes = [
        f"memdir index on disk: {m['index_mb']:.1f} MB for {args.files:,} files",
        f"memdir freshness check before each search (stat walk of {args.files:,} files): "
        f"{m['sync_check_ms']:.1f} ms",
        f"bm25_full_search tool call incl. that check and snippets: p50 {m['tool_search_ms'][0]:.1f} ms, "
        f"p99 {m['tool_search_ms'][1]:.1f} ms",
        f"insert through the tool (atomic write + index update): p50 {m['tool_insert_ms'][0]:.1f} ms, "
        f"p99 {m['tool_insert_ms'][1]:.1f} ms",
        f"top-10 overlap with bm25s without memdir's signage boost: {m_plain_overlap:.3f} "
        f"(up to ties: {m_plain_ties:.3f})",
        f"memdir update CPU time (all threads) p50: {m['update_cpu_ms']:.1f} ms, of "
        f"{m['update_ms'][0]:.1f} ms wall; the rest is waiting for the disk and the scheduler",
        f"one fsync of a fresh 1 KB file on this disk during the run: median {fsync_ms:.1f} ms",
        f"load average during the run (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}",
        f"query p50 speed-up over bm25s at {args.files:,} files: {b['query_ms'][0] / m['query_ms'][0]:.1f}x",
    ]
    for n in notes:
        console.print(n)
    with (out / "table.txt").open("w") as fh:
        Console(file=fh, width=140).print(tab)
        fh.write("\n".join(notes) + "\n")
    plot(rows, out / "bm25_index.png")
    summary = {
        "args": {k: str(v) for k, v in vars(args).items()},
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "rows": [{k: v for k, v in r.items() if not k.startswith("results") and k != "scores"} for r in rows],
        "notes": notes,
        "queries": qs[:10],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    console.print(f"wrote {out}/summary.json, table.txt, bm25_index.png")


if __name__ == "__main__":
    main()
