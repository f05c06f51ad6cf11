"""How the generated benchmark grows with its size parameters: the corpus axis of cost curves.

Prints, for a range of session counts, the turns, characters, chunks, questions and generation
time, and writes a table and a PNG under runs/generated_scale/.

    python benchmarks/generated_scale.py [--people 3] [--turns 8] [--max-sessions 640]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from memdir_study.bench.generated import generate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=3)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--attributes", type=int, default=4)
    ap.add_argument("--max-sessions", type=int, default=640)
    ap.add_argument("--out", type=Path, default=Path("runs/generated_scale"))
    args = ap.parse_args()
    rows = []
    n = 10
    while n <= args.max_sessions:
        t0 = time.perf_counter()
        s = generate(people=args.people, sessions=n, turns_per_session=args.turns, attributes=args.attributes)
        ms = (time.perf_counter() - t0) * 1000
        rows.append(
            {
                "sessions": n,
                "turns": len(s.turns),
                "chars": sum(len(t.text) for t in s.turns),
                "chunks": len(s.chunks()),
                "questions": len(s.questions),
                "facts": len(s.facts),
                "ms": round(ms, 1),
            }
        )
        n *= 2
    print(f"{'sessions':>8} {'turns':>7} {'chars':>9} {'chunks':>7} {'questions':>9} {'facts':>6} {'ms':>8}")
    for r in rows:
        print(
            f"{r['sessions']:>8} {r['turns']:>7} {r['chars']:>9} {r['chunks']:>7} "
            f"{r['questions']:>9} {r['facts']:>6} {r['ms']:>8}"
        )
    first, last = rows[0], rows[-1]
    ratio = {k: last[k] / first[k] for k in ("sessions", "chars", "chunks", "questions")}
    print(
        f"sessions x{ratio['sessions']:.0f}: chars x{ratio['chars']:.1f}, chunks x{ratio['chunks']:.1f}, "
        f"questions x{ratio['questions']:.1f}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.json").write_text(json.dumps(rows, indent=2))
    fig, ax = plt.subplots(figsize=(6, 4))
    for key in ("turns", "chunks", "questions"):
        ax.plot([r["sessions"] for r in rows], [r[key] for r in rows], marker="o", label=key)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sessions")
    ax.set_title(f"generated benchmark size (people={args.people}, turns/session={args.turns})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "scale.png", dpi=100)
    print(f"wrote {args.out / 'table.json'} and {args.out / 'scale.png'}")


if __name__ == "__main__":
    main()
