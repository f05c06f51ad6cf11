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
import pytest
from scipy.stats import spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer

from memdir.analytics.stats import store_stats
from memdir.analytics.taxonomy import B4_MAX_UNITS
from memdir.tools.wiring import open_store


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
    v = store_stats(open_store(root)).as_json()
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
MISFILED = "The truck needs fresh engine oil, new brake pads and brake fluid; inspect each tire."


def planted_store(tmp_path: Path) -> Path:
    files = {f"cooking/c{i}.md": md(f"c{i}", "recipe", t) for i, t in enumerate(COOKING)}
    files |= {f"cars/k{i}.md": md(f"k{i}", "car care", t) for i, t in enumerate(CARS)}
    files["cooking/truck.md"] = md("truck", "truck", MISFILED)
    return write(tmp_path / "planted", files)


def test_b3_flags_the_planted_misfiled_unit(tmp_path: Path) -> None:
    v = store_stats(open_store(planted_store(tmp_path))).as_json()
    assert v["details"]["b3_leaked"] == ["/memories/cooking/truck.md"]
    assert v["b3"] == 1 / 7  # one leaked unit out of the seven measured units


P4 = "turbocharger turbocharger turbocharger turbocharger"  # one word: a row with one term
R3 = "orchestration orchestration orchestration"


def test_b3_counts_the_unit_in_its_own_centroid_by_hand(tmp_path: Path) -> None:
    """a/{a1: p q, a2: r}, b/{b1: p, b2: p}. a1 shares nothing with a2 but p with folder b."""
    files = {
        "a/a1.md": md("a1", "x", "turbocharger marmalade turbocharger marmalade"),
        "a/a2.md": md("a2", "x", R3),
        "b/b1.md": md("b1", "x", P4),
        "b/b2.md": md("b2", "x", P4),
    }
    v = store_stats(open_store(write(tmp_path / "s", files))).as_json()
    # n = 4 texts; idf(p) = ln(5/4) + 1 (df 3), idf(q) = ln(5/2) + 1 (df 1). The centroid of b
    # points along p, so cos(a1, mu_b) = idf(p) / |(idf(p), idf(q))|. a1 and a2 are orthogonal
    # unit rows, so cos(a1, mu_a) = 1/sqrt(2) with a1 in mu_a, and cos(a1, a2) = 0 without.
    ip, iq = math.log(5 / 4) + 1, math.log(5 / 2) + 1
    to_b = ip / math.hypot(ip, iq)
    assert 0 < to_b < 1 / math.sqrt(2)  # 0.538 < 0.707: a1 is nearer its own group, u included
    # a2: 0 to b against 1/sqrt(2) (or 0, left out: not strictly closer); b1, b2: 1 to b.
    assert v["b3"] == 0.0 and v["details"]["b3_leaked"] == []
    assert v["b3_loo"] == 1 / 4 and v["details"]["b3_loo_leaked"] == ["/memories/a/a1.md"]


def test_b3_a_unit_alone_in_its_group_never_leaks_and_still_counts(tmp_path: Path) -> None:
    """a/{a1: p}, b/{b1: p, b2: r}: b1 is nearer a than its own group either way."""
    files = {"a/a1.md": md("a1", "x", P4), "b/b1.md": md("b1", "x", P4), "b/b2.md": md("b2", "x", R3)}
    v = store_stats(open_store(write(tmp_path / "s", files))).as_json()
    # b1: cos to mu_a = 1 > cos to mu_b = 1/sqrt(2) (b1 in it) > cos(b1, b2) = 0 (left out).
    # a1 is its own centroid (cos 1); b2: 1/sqrt(2) own, 0 to a.
    assert v["details"]["b3_leaked"] == v["details"]["b3_loo_leaked"] == ["/memories/b/b1.md"]
    assert v["b3"] == 1 / 3  # every measured unit is judged, a1 included
    assert v["b3_loo"] == 1 / 2  # only units with a measured sibling are judged


CLEAN_CARS = [
    "Check the engine oil and the brake fluid before every long drive.",
    "Rotate each tire and inspect the brake pads when changing engine oil.",
    "The gearbox and engine need fresh oil; the brake pedal felt soft.",
    "Replace the brake pads and top up the engine oil on the old truck.",
    "The car battery died twice in winter; the alternator belt squeaks.",
    "Snow tyres fitted in November; keep the windscreen water topped up with salt.",
]


def test_b3_is_zero_on_a_clean_two_folder_store(tmp_path: Path) -> None:
    """Six car notes and three cooking notes, each where it belongs: the study's B3 is 0. Left
    out of its own centroid, the snow-tyre note (a car note sharing few words with the other
    car notes, and 'salt' with the cooking ones) would count as leaked: 1/9."""
    files = {f"cars/k{i}.md": md(f"k{i}", "car care", t) for i, t in enumerate(CLEAN_CARS)}
    files |= {f"cooking/c{i}.md": md(f"c{i}", "recipe", t) for i, t in enumerate(COOKING)}
    v = store_stats(open_store(write(tmp_path / "clean", files))).as_json()
    assert v["units_measured"] == 9 and v["dirs"] == 2
    assert v["b3"] == 0.0
    assert v["b3_loo"] == 1 / 9 and v["details"]["b3_loo_leaked"] == ["/memories/cars/k5.md"]


def _brute(tmp_path: Path) -> tuple[float, float, float, float]:
    """B2, B3, B3 leave-one-out and B4 of the planted store by explicit loops over pairs and
    centroids."""
    units = [(("cars", f"k{i}"), t) for i, t in enumerate(CARS)]
    units += [(("cooking", f"c{i}"), t) for i, t in enumerate(COOKING)] + [(("cooking", "truck"), MISFILED)]
    units.sort()  # path order, as the store walks
    x = TfidfVectorizer().fit_transform([t for _, t in units]).toarray()
    folder = [p[0] for p, _ in units]
    cos = x @ x.T
    same = [cos[i, j] for i, j in itertools.combinations(range(7), 2) if folder[i] == folder[j]]
    cross = [cos[i, j] for i, j in itertools.combinations(range(7), 2) if folder[i] != folder[j]]
    b2 = float(np.mean(same) / np.mean(cross))

    def c(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    leaked = leaked_loo = 0
    for i in range(7):
        own = np.mean([x[j] for j in range(7) if folder[j] == folder[i]], axis=0)  # u included
        loo = np.mean([x[j] for j in range(7) if j != i and folder[j] == folder[i]], axis=0)
        other = np.mean([x[j] for j in range(7) if folder[j] != folder[i]], axis=0)
        leaked += c(x[i], other) > c(x[i], own)
        leaked_loo += c(x[i], other) > c(x[i], loo)
    # tree distance: siblings 2 (file-folder-file), across folders 4 (through the root)
    pairs = list(itertools.combinations(range(7), 2))
    tree_d = [2 if folder[i] == folder[j] else 4 for i, j in pairs]
    content = [1 - cos[i, j] for i, j in pairs]
    return b2, leaked / 7, leaked_loo / 7, float(spearmanr(tree_d, content).statistic)


def test_b2_b3_b4_match_brute_force(tmp_path: Path) -> None:
    v = store_stats(open_store(planted_store(tmp_path))).as_json()
    b2, b3, b3_loo, b4 = _brute(tmp_path)
    assert math.isclose(v["b2"], b2, rel_tol=1e-9)
    assert math.isclose(v["b3"], b3, rel_tol=1e-12)
    assert math.isclose(v["b3_loo"], b3_loo, rel_tol=1e-12)
    assert b3_loo > b3  # here leaving the unit out also flags a car note
    assert math.isclose(v["b4"], b4, rel_tol=1e-9)
    assert v["b4_pairs"] == 21
    assert v["b2"] > 1  # siblings are more alike than strangers here


def test_short_units_are_left_out(tmp_path: Path) -> None:
    root = planted_store(tmp_path)
    (root / "cars" / "tiny.md").write_text(md("tiny", "x", "Oil."), encoding="utf-8")
    v = store_stats(open_store(root)).as_json()
    assert v["units"] == 8 and v["units_measured"] == 7 and v["b4_pairs"] == 21


@pytest.mark.slow
def test_b4_samples_units_beyond_the_cap(tmp_path: Path) -> None:
    n = B4_MAX_UNITS + 50
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    files = {}
    for i in range(n):
        body = " ".join(rng.choice(words, 12))
        files[f"d{i % 40}/f{i}.md"] = md(f"f{i}", "note", body)
    root = write(tmp_path / "big", files)
    a = store_stats(open_store(root)).as_json()
    b = store_stats(open_store(root)).as_json()
    assert a["units_measured"] == n
    assert a["b4_pairs"] == B4_MAX_UNITS * (B4_MAX_UNITS - 1) // 2
    assert a["b4"] is not None and a["b4"] == b["b4"]


@pytest.mark.slow
def test_deterministic_across_processes(tmp_path: Path) -> None:
    root = planted_store(tmp_path)
    src = str(Path(__file__).resolve().parents[2] / "src")
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
    v = store_stats(open_store(root)).as_json()

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
