"""Shared pieces of the benchmark scripts: a synthetic store, timing statistics and outputs.

The synthetic store follows the project's conventions (frontmatter on every file, a MEMORY.md
in every folder, fact lines with locators) so that the tools run their real code paths
(frontmatter parsing, descriptions in listings) rather than a degenerate fast path.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

WORDS = tuple(
    str.split(
        "the of and to in is that for it as was with be by on not he this are or his from at which but "
        "have an they you were her she there been one all we their has would when if so no what more "
        "out up into do will about time them can only other new some could these two may then first "
        "any like now my such make over our even most me state after also made many did must before "
        "back see through way where get much go well your know should down work year because come "
        "people just say each those take day good how long little use own same great right still "
        "alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil "
        "trent victor walter coffee tea vegan vegetarian hiking climbing piano guitar berlin paris "
        "lisbon tokyo nairobi lima project deadline meeting budget doctor dentist allergy birthday "
        "anniversary recipe garden bicycle marathon novel museum concert flight hotel visa passport "
        "insurance mortgage salary promotion manager colleague sister brother daughter son parents"
    )
)
VERBS = tuple(
    str.split("moved started stopped visited booked finished joined left prefers dislikes adopted sold")
)
TOPICS = ("people", "projects", "places", "health", "finance", "hobbies", "travel", "work", "home", "events")


def _sentence(rng: random.Random, n: int) -> str:
    words = rng.choices(WORDS, k=n)
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def file_text(stem: str, rng: random.Random, target_bytes: int, serial: int) -> str:
    """One memory file of about `target_bytes`: frontmatter, a heading, prose and fact lines."""
    who = rng.choice(WORDS[-60:])
    head = (
        f"---\nname: {stem}\ndescription: Notes on {stem.replace('-', ' ')} ({who}, entry {serial})\n"
        f"metadata:\n  serial: '{serial}'\n---\n# {stem.replace('-', ' ').title()}\n\n"
        f"Record key: K{serial:07d}Q\n\n"
    )
    parts = [head]
    size = len(head)
    section = 1
    while size < target_bytes:
        if rng.random() < 0.15:
            chunk = f"\n## Section {section}\n\n"
            section += 1
        elif rng.random() < 0.5:
            a, b = rng.choice(WORDS[-80:]), rng.choice(WORDS[-80:])
            chunk = (
                f"- {a} | {rng.choice(VERBS)}: {b} (since 20{rng.randint(10, 25)}-0{rng.randint(1, 9)}-1"
                f"{rng.randint(0, 9)}) [S{rng.randint(1, 40)}T{rng.randint(1, 30)}]\n"
            )
        else:
            chunk = _sentence(rng, rng.randint(8, 20)) + "\n"
        parts.append(chunk)
        size += len(chunk)
    return "".join(parts)


def memory_index(folder: str, children: Iterable[str]) -> str:
    listing = "".join(f"- {c}\n" for c in sorted(children))
    return (
        f"---\ndescription: Index of {folder or 'the memory root'}\n---\n# {folder or 'Memory'}\n\n{listing}"
    )


def build_store(
    root: Path,
    n_files: int,
    seed: int = 7,
    mean_bytes: int = 1500,
    rare: str | None = None,
    rare_every: int = 0,
) -> list[str]:
    """Write `n_files` memory files (MEMORY.md indexes included) under `root`, nested up to
    four levels. Returns the memory paths of the ordinary (non-index) files, in creation order.

    `rare`, when given, is planted on one line of every `rare_every`-th file (grep benchmark).
    """
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    folders: dict[tuple[str, ...], set[str]] = {(): set()}
    # Folder plan: topic / subtopic / leaf folders; files spread over all depths.
    plan: list[tuple[str, ...]] = [()]
    for t in TOPICS:
        plan.append((t,))
        for s in range(4):
            plan.append((t, f"{t}-group-{s}"))
            for leaf in range(3):
                plan.append((t, f"{t}-group-{s}", f"set-{leaf}"))
    n_plain = n_files - len(plan)  # one MEMORY.md per folder
    if n_plain < 1:
        raise ValueError(f"need more than {len(plan)} files for the folder plan")
    weights = [1 if len(p) < 2 else 3 for p in plan]
    for serial in range(n_plain):
        folder = rng.choices(plan, weights)[0]
        stem = f"{rng.choice(WORDS[-60:])}-{rng.choice(WORDS[-60:])}-{serial}"
        size = max(300, int(rng.lognormvariate(0, 0.5) * mean_bytes))
        text = file_text(stem, rng, size, serial)
        if rare and rare_every and serial % rare_every == 0:
            text += f"Planted marker {rare} for the rare-literal search.\n"
        disk = root.joinpath(*folder)
        disk.mkdir(parents=True, exist_ok=True)
        (disk / f"{stem}.md").write_text(text, encoding="utf-8")
        for k in range(len(folder) + 1):
            folders.setdefault(folder[:k], set())
            if k < len(folder):
                folders[folder[:k]].add(folder[k] + "/")
        folders[folder].add(f"{stem}.md")
        written.append("/memories/" + "/".join((*folder, f"{stem}.md")))
    for folder in plan:
        disk = root.joinpath(*folder)
        disk.mkdir(parents=True, exist_ok=True)
        (disk / "MEMORY.md").write_text(memory_index("/".join(folder), folders.get(folder, set())), "utf-8")
    return written


def tree_bytes(root: Path) -> dict[str, bytes]:
    """{relative path: content} of every file under `root`, hidden ones included."""
    snap: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            snap[p.relative_to(root).as_posix()] = p.read_bytes()
    return snap


def tree_modes(root: Path) -> dict[str, int]:
    """{relative path: permission bits} of every file and folder under `root`."""
    modes: dict[str, int] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            p = Path(dirpath) / name
            modes[p.relative_to(root).as_posix() + ("/" if name in dirs else "")] = p.lstat().st_mode & 0o777
    return modes


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def stats_ms(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    return {"median_ms": statistics.median(ms), "p90_ms": p90, "min_ms": ms[0], "n": len(ms)}


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")


def bar_chart(path: Path, title: str, labels: list[str], series: dict[str, list[float]], ylabel: str) -> None:
    """Grouped bars on a log scale (the series differ by orders of magnitude)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(labels) + 2), 4.5))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(labels))]
        ax.bar(xs, values, width, label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def machine() -> dict[str, Any]:
    import platform

    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


def filesystem_of(path: Path) -> str:
    """The mount type holding `path` (from /proc/mounts; 'unknown' elsewhere)."""
    try:
        mounts = [ln.split() for ln in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    real = os.path.realpath(path)
    best = max(
        (m for m in mounts if real == m[1] or real.startswith(m[1].rstrip("/") + "/")),
        key=lambda m: len(m[1]),
    )
    return best[2]


def fsync_calibration(folder: Path, n: int = 30) -> dict[str, float]:
    """What one fsync costs on this disk, to read the write timings against."""
    folder.mkdir(parents=True, exist_ok=True)
    f_times, d_times = [], []
    for i in range(n):
        fd = os.open(folder / f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, b"x" * 1024)
        f_times.append(timed(lambda: os.fsync(fd))[0])  # noqa: B023
        os.close(fd)
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        d_times.append(timed(lambda: os.fsync(dfd))[0])  # noqa: B023
        os.close(dfd)
    return {"file": stats_ms(f_times)["median_ms"], "dir": stats_ms(d_times)["median_ms"]}
