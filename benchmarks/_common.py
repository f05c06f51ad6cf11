"""The one helper module of benchmarks/ and benchmarks/reliability/: synthetic stores, served
stores, timing, tables and outputs. Importing it puts the repository (for `tests.*`) and its
src/ on sys.path, so every script runs from a checkout.

The synthetic stores follow the project's conventions (frontmatter on every file, a MEMORY.md
in every folder, fact lines with locators) so that the tools run their real code paths
(frontmatter parsing, descriptions in listings) rather than a degenerate fast path.
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]

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


FACTS = "- alice | diet: vegan (since 2023-05-02) [S6T5]\n" * 40  # ~2 KB


def make_store(
    root: Path, files: int, *, folders: int = 20, sections: int = 0, body: str = FACTS, seed: int = 42
) -> None:
    """`files` notes dealt over `folders` topic folders (`topic-NN/note-KKK.md`, the first
    folders taking one more when they do not divide, none left empty), a MEMORY.md in each
    folder and the root.
    A note is frontmatter, a title and `body`; with `sections`, that many sections instead, of
    words drawn (seeded) from the folder's own vocabulary and a shared one, each ending in a
    fact line, so the taxonomy metrics have topics to find (stats_10k.py)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shared = [f"common{i}" for i in range(400)]
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("---\ndescription: root\n---\n# Memory\nA synthetic store.\n")
    for f in range(min(folders, files)):
        topic = [f"t{f}w{i}" for i in range(150)]
        folder = root / f"topic-{f:02d}"
        folder.mkdir()
        (folder / "MEMORY.md").write_text(
            f"---\ndescription: topic {f} notes and their files\n---\nFiles about topic {f} and its people.\n"
        )
        for k in range(files // folders + (f < files % folders)):
            desc = f"topic {f} note {k} {' '.join(rng.choice(topic, 3))}"
            parts = [f"---\nname: note-{k:03d}\ndescription: {desc}\n---", f"# Note {k}"]
            for s in range(sections):
                words = list(rng.choice(topic, 14)) + list(rng.choice(shared, 8))
                rng.shuffle(words)
                parts.append(f"## {' '.join(rng.choice(topic, 2))} {s}\n- {' '.join(words)} [S{k}T{s}]")
            (folder / f"note-{k:03d}.md").write_text("\n".join(parts) + "\n" + ("" if sections else body))


def baseline_tree(rev: str, into: Path) -> Path:
    """The `src/` of `rev`, extracted with `git archive` (no checkout, no worktree): the code a
    script runs beside the working tree's, in child processes, to print both in one run."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds `fn()` took, what it returned): the one timer of the scripts."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def stats_ms(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    return {"median_ms": statistics.median(ms), "p90_ms": p90, "min_ms": ms[0], "n": len(ms)}


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]] = ()) -> Table:
    """A rich table of right-aligned columns (figures), `rows` already formatted."""
    from rich.table import Table

    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="right")
    for row in rows:
        t.add_row(*row)
    return t


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


# -- served stores -----------------------------------------------------------------------------
def env() -> dict[str, str]:
    """This environment with src/ on PYTHONPATH, for child processes."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "src") + os.pathsep + e.get("PYTHONPATH", "")
    return e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(argv: list[str], port: int) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memdir", "serve", *argv, "--http", str(port)],
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def serve_http(root: Path, profile: str = "manage") -> tuple[subprocess.Popen[bytes], str]:
    """`memdir serve ROOT --profile PROFILE --http PORT` in a child process."""
    return _serve([str(root), "--profile", profile], free_port())


def serve_tenants(tenants_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`memdir serve --tenants FILE --http PORT` in a child process."""
    return _serve(["--tenants", str(tenants_file)], free_port())
