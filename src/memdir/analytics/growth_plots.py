"""growth.json and its three PNGs, written next to each other so the folder explains itself."""

from __future__ import annotations

import json
from pathlib import Path

from memdir.analytics.growth import Growth
from memdir.jsontypes import JsonObject

PLOTS = ("growth_size.png", "growth_events.png", "growth_adherence.png")


def write(g: Growth, out: Path, title: str = "") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    out.mkdir(parents=True, exist_ok=True)
    written = [out / "growth.json"]
    written[0].write_text(json.dumps(g.as_json(), indent=1) + "\n", encoding="utf-8")
    xs = _column(g.steps, "step")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(xs, _column(g.steps, "files"), label="files", color="tab:blue")
    ax.set_xlabel("step")
    ax.set_ylabel("files", color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(xs, _column(g.steps, "sections"), label="sections", color="tab:orange")
    ax2.set_ylabel("sections", color="tab:orange")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if g.fate_step is not None:
        ax.axvline(g.fate_step, color="grey", linestyle=":", linewidth=1)
        ax.annotate("fates taken here", (g.fate_step, 0), xytext=(3, 3), textcoords="offset points",
                    fontsize=7, color="grey")  # fmt: skip
    ax.set_title(f"{title} files and sections per step".strip())
    fig.tight_layout()
    written.append(out / PLOTS[0])
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key in ("creations", "edits", "deletions", "renames"):
        ax.step(xs, _column(g.steps, f"cum_{key}"), where="post", label=key)
    ax.set_xlabel("step")
    ax.set_ylabel("cumulative events")
    ax.legend()
    ax.set_title(f"{title} cumulative creations, edits, deletions, renames".strip())
    fig.tight_layout()
    written.append(out / PLOTS[1])
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax_x = _column(g.adherence, "step")
    for key in ("b1_mean", "b1_min", "b3", "b4"):
        ys = _column(g.adherence, key)
        top.plot(ax_x, ys, marker="o", markersize=3, label=key)
    top.set_ylabel("B1, B3, B4")
    top.legend(fontsize=8)
    bottom.plot(
        ax_x,
        _column(g.adherence, "b2"),
        marker="o",
        markersize=3,
        color="tab:purple",
        label="b2",
    )
    bottom.axhline(1.0, color="grey", linestyle=":", linewidth=1)
    bottom.set_ylabel("B2 (ratio)")
    bottom.set_xlabel(f"step (every {g.every})")
    top.set_title(f"{title} taxonomy adherence per step (gaps = undefined)".strip())
    fig.tight_layout()
    written.append(out / PLOTS[2])
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)
    return written


def _column(rows: list[JsonObject], key: str) -> list[float]:
    """One number per row; an undefined measure (None) is NaN, a gap in the line."""
    return [v if isinstance(v := r[key], int | float) else float("nan") for r in rows]
