"""B1-B4 against hand computation and brute force; determinism across processes."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer

from memdir.analytics.stats import store_stats
from memdir.analytics.taxonomy import B4_MAX_UNITS
from memdir.store.store import Store


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def md(name: str, desc: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {desc}\n---\n{body}\n"


def test_b1_three_siblings_by_hand(tmp_path: Path) -> None:
    body = "A body long enough to be a measured unit of this store."
    root = write(
        tmp_path / "s",
        {
            "alpha.md": md("alpha", "cat dog", body),
            "beta.md": md("beta", "cat fish", body),
            "gamma.md": md("gamma", "bird", body),
        },
    )
    v = store_stats(Store(root, observers=False)).as_json()
    # Labels "alpha cat dog", "beta cat fish", "gamma bird"; TfidfVectorizer defaults:
    # idf(t) = ln((1 + n) / (1 + df)) + 1 with n = 3; rows l2-normalized.
    i1 = math.log(4 / 2) + 1  # df = 1
    i2 = math.log(4 / 3) + 1  # df = 2 ("cat")
    cos_ab = i2**2 / (2 * i1**2 + i2**2)  # only "cat" is shared
    assert math.isclose(v["b1_mean"], ((1 - cos_ab) + 1 + 1) / 3, rel_tol=1e-12)
    assert math.isclose(v["b1_min"], 1 - cos_ab, rel_tol=1e-12)
    assert v["details"]["b1_min_pair"] == ["/memories/alpha.md", "/memories/beta.md"]


COOKING = [
    "Boil the pasta in salted water and stir the garlic sauce slowly.",
    "Roast garlic in the oven, then blend it into a creamy pasta sauce.",
    "Season the sauce with salt, basil and roasted garlic before serving pasta.",
]
CARS = [
    "Check the engine oil and the brake fluid before every long drive.",
    "Rotate each tire and inspect the brake pads when changing engine oil.",
    "The gearbox and engine need fresh oil; the brake pedal felt soft.",
]
MISFILED = "Replace the brake pads and top up the engine oil on the old truck."


def planted_store(tmp_path: Path) -> Path:
    files = {f"cooking/c{i}.md": md(f"c{i}", "recipe", t) for i, t in enumerate(COOKING)}
    files |= {f"cars/k{i}.md": md(f"k{i}", "car care", t) for i, t in enumerate(CARS)}
    files["cooking/truck.md"] = md("truck", "truck", MISFILED)
    return write(tmp_path / "planted", files)


def test_b3_flags_the_planted_misfiled_unit(tmp_path: Path) -> None:
    v = store_stats(Store(planted_store(tmp_path), observers=False)).as_json()
    assert v["details"]["b3_leaked"] == ["/memories/cooking/truck.md"]
    assert v["b3"] == 1 / 7  # one leaked unit out of seven units that have a sibling group


def _brute(tmp_path: Path) -> tuple[float, float, float]:
    """B2, B3 and B4 of the planted store by explicit loops over pairs and centroids."""
    units = [(("cars", f"k{i}"), t) for i, t in enumerate(CARS)]
    units += [(("cooking", f"c{i}"), t) for i, t in enumerate(COOKING)] + [(("cooking", "truck"), MISFILED)]
    units.sort()  # path order, as the store walks
    x = TfidfVectorizer().fit_transform([t for _, t in units]).toarray()
    folder = [p[0] for p, _ in units]
    cos = x @ x.T
    same = [cos[i, j] for i, j in itertools.combinations(range(7), 2) if folder[i] == folder[j]]
    cross = [cos[i, j] for i, j in itertools.combinations(range(7), 2) if folder[i] != folder[j]]
    b2 = float(np.mean(same) / np.mean(cross))
    leaked = 0
    for i in range(7):
        own = np.sum([x[j] for j in range(7) if j != i and folder[j] == folder[i]], axis=0)
        other = np.sum([x[j] for j in range(7) if folder[j] != folder[i]], axis=0)

        def c(a: np.ndarray, b: np.ndarray) -> float:
            return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

        leaked += c(x[i], other) > c(x[i], own)
    # tree distance: siblings 2 (file-folder-file), across folders 4 (through the root)
    pairs = list(itertools.combinations(range(7), 2))
    tree_d = [2 if folder[i] == folder[j] else 4 for i, j in pairs]
    content = [1 - cos[i, j] for i, j in pairs]
    return b2, leaked / 7, float(spearmanr(tree_d, content).statistic)


def test_b2_b4_match_brute_force(tmp_path: Path) -> None:
    v = store_stats(Store(planted_store(tmp_path), observers=False)).as_json()
    b2, b3, b4 = _brute(tmp_path)
    assert math.isclose(v["b2"], b2, rel_tol=1e-9)
    assert math.isclose(v["b3"], b3, rel_tol=1e-12)
    assert math.isclose(v["b4"], b4, rel_tol=1e-9)
    assert v["b4_pairs"] == 21
    assert v["b2"] > 1  # siblings are more alike than strangers here


def test_short_units_are_left_out(tmp_path: Path) -> None:
    root = planted_store(tmp_path)
    (root / "cars" / "tiny.md").write_text(md("tiny", "x", "Oil."), encoding="utf-8")
    v = store_stats(Store(root, observers=False)).as_json()
    assert v["units"] == 8 and v["units_measured"] == 7 and v["b4_pairs"] == 21


def test_b4_samples_units_beyond_the_cap(tmp_path: Path) -> None:
    n = B4_MAX_UNITS + 50
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    files = {}
    for i in range(n):
        body = " ".join(rng.choice(words, 12))
        files[f"d{i % 40}/f{i}.md"] = md(f"f{i}", "note", body)
    root = write(tmp_path / "big", files)
    a = store_stats(Store(root, observers=False)).as_json()
    b = store_stats(Store(root, observers=False)).as_json()
    assert a["units_measured"] == n
    assert a["b4_pairs"] == B4_MAX_UNITS * (B4_MAX_UNITS - 1) // 2
    assert a["b4"] is not None and a["b4"] == b["b4"]


def test_deterministic_across_processes(tmp_path: Path) -> None:
    root = planted_store(tmp_path)
    src = str(Path(__file__).resolve().parents[1] / "src")
    outs = []
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": src}
        proc = subprocess.run(
            [sys.executable, "-m", "memdir", "stats", str(root), "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outs.append(json.loads(proc.stdout))
    assert outs[0] == outs[1]
    assert all(outs[0][k] is not None for k in ("b1_mean", "b2", "b3", "b4"))


def test_b1_matches_brute_force_on_small_and_large_groups(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(40)]
    body = "A body long enough to be a measured unit of this store."
    files: dict[str, str] = {}
    sizes = {"big": 70, "small": 3}  # 70 siblings take the chunked path, 3 the vectorized one
    for folder, n in sizes.items():
        for i in range(n):
            files[f"{folder}/f{i:02d}.md"] = md(f"f{i:02d}", " ".join(rng.choice(words, 3)), body)
    root = write(tmp_path / "s", files)
    v = store_stats(Store(root, observers=False)).as_json()

    # Brute force: nodes are root (children big, small), big (70 files), small (3 files).
    def label(folder: str, i: int) -> str:  # stem + description
        return f"f{i:02d} " + files[f"{folder}/f{i:02d}.md"].split("\n")[2].removeprefix("description: ")

    groups = [["big", "small"], *[[label(d, i) for i in range(n)] for d, n in sizes.items()]]
    x = TfidfVectorizer().fit_transform([label for g in groups for label in g]).toarray()
    node_means, pair_min, start = [], 1.0, 0
    for g in groups:
        rows = x[start : start + len(g)]
        start += len(g)
        d = [1 - float(rows[i] @ rows[j]) for i, j in itertools.combinations(range(len(g)), 2)]
        node_means.append(sum(d) / len(d))
        pair_min = min(pair_min, *d)
    assert math.isclose(v["b1_mean"], sum(node_means) / 3, rel_tol=1e-9)
    assert math.isclose(v["b1_min"], pair_min, rel_tol=1e-9, abs_tol=1e-12)
