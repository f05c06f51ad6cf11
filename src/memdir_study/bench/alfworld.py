"""ALFWorld valid_seen: the 140 games, their task families, the chain orders and the goal parser.

The skill study runs one chain of tasks in a fixed order, so the order is part of the
benchmark, not of the runner. Both orders are derived from seed 42 and documented here:

* **full**: each family's games (sorted by id, i.e. manifest order) are shuffled with one `random.Random(42)`,
  families taken in :data:`FAMILY_ORDER`; then the families are interleaved *evenly*: the k-th
  game of a family of n gets the key (k + 0.5) / n and the chain is sorted by (key, family
  order). Every prefix of the chain holds the families in about their overall proportions,
  so a store built from tasks 1..i-1 has seen every family early.
* **three**: the full chain dealt into three chains by position (task i goes to chain i mod 3),
  47 + 47 + 46 tasks, each itself evenly interleaved; stores are reset between chains.
"""

from __future__ import annotations

import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from memdir.errors import MemdirError

MANIFEST = "valid_seen_140.txt"
SEED = 42

# ALFWorld task type -> the family name the study's tables use.
FAMILIES: dict[str, str] = {
    "pick_and_place_simple": "place",
    "pick_two_obj_and_place": "two-object",
    "look_at_obj_in_light": "look",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
}
FAMILY_ORDER: tuple[str, ...] = ("place", "two-object", "look", "clean", "heat", "cool")

# The station each transforming family uses, and the verb of its command.
STATIONS: dict[str, tuple[str, str]] = {
    "clean": ("clean", "sinkbasin"),
    "heat": ("heat", "microwave"),
    "cool": ("cool", "fridge"),
}


def data_root() -> Path:
    """`$MEMDIR_DATA/alfworld`, default `../shared/data/alfworld` next to the repository."""
    env = os.environ.get("MEMDIR_DATA")
    base = Path(env) if env else Path(__file__).resolve().parents[4].parent / "shared" / "data"
    return base / "alfworld"


@dataclass(frozen=True)
class Game:
    """One game of the manifest. `id` is `<task folder>/<trial>`, unique and readable."""

    id: str
    path: Path
    task_type: str

    @property
    def family(self) -> str:
        return FAMILIES[self.task_type]


def load_games(root: Path | None = None) -> list[Game]:
    """The games of the manifest, in manifest order (sorted by path)."""
    root = root or data_root()
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise MemdirError(
            f"no ALFWorld manifest at {manifest}; set MEMDIR_DATA to the folder holding alfworld/{MANIFEST}"
        )
    games: list[Game] = []
    for lineno, line in enumerate(manifest.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        rel, _, task_type = line.partition("\t")
        if task_type not in FAMILIES:
            raise MemdirError(f"{manifest}:{lineno}: unknown task type {task_type!r}")
        parts = Path(rel).parts
        games.append(Game(f"{parts[-3]}/{parts[-2]}", root / rel, task_type))
    return games


def full_chain(games: list[Game], seed: int = SEED) -> list[Game]:
    """The fixed interleaved order of all games (see the module docstring)."""
    rng = random.Random(seed)
    keyed: list[tuple[float, int, Game]] = []
    for fam_rank, family in enumerate(FAMILY_ORDER):
        members = sorted((g for g in games if g.family == family), key=lambda g: g.id)
        rng.shuffle(members)
        keyed += [((k + 0.5) / len(members), fam_rank, g) for k, g in enumerate(members)]
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [g for _, _, g in keyed]


def three_chains(games: list[Game], seed: int = SEED) -> list[list[Game]]:
    """The full chain dealt by position into three independent chains."""
    full = full_chain(games, seed)
    return [full[j::3] for j in range(3)]


def chains(games: list[Game], protocol: str, n_tasks: int | None = None) -> list[list[Game]]:
    """The chains of a protocol; `n_tasks` keeps the first N tasks of each chain."""
    if protocol == "full":
        out = [full_chain(games)]
    elif protocol == "three":
        out = three_chains(games)
    else:
        raise MemdirError(f"unknown protocol {protocol!r}; use 'full' or 'three'")
    return [c[:n_tasks] if n_tasks is not None else c for c in out]


@dataclass(frozen=True)
class Goal:
    """What the task text asks for: the object type, where it goes, and the lamp for `look`."""

    family: str
    obj: str
    target: str | None = None
    lamp: str | None = None
    count: int = 1


_W = r"([a-z]+)"
_PATTERNS: dict[str, list[re.Pattern[str]]] = {
    "place": [re.compile(rf"^put (?:a|an|some) {_W} (?:in|on) {_W}$")],
    "two-object": [
        re.compile(rf"^put two {_W} (?:in|on) {_W}$"),
        re.compile(rf"^find two {_W} and put them (?:in|on) {_W}$"),
    ],
    "look": [re.compile(rf"^look at {_W} under the {_W}$"), re.compile(rf"^examine the {_W} with the {_W}$")],
    **{
        fam: [
            re.compile(rf"^put (?:a|an|some) {adj} {_W} (?:in|on) {_W}$"),
            re.compile(rf"^{fam} (?:a|an|some) {_W} and put it (?:in|on) {_W}$"),
        ]
        for fam, adj in (("clean", "clean"), ("heat", "hot"), ("cool", "cool"))
    },
}


def parse_goal(task: str, family: str) -> Goal:
    """Read the goal from the task sentence the way a reader would (no game files consulted)."""
    text = task.strip().lower().removeprefix("your task is to:").strip().rstrip(".")
    for pat in _PATTERNS[family]:
        m = pat.match(text)
        if m:
            if family == "look":
                return Goal(family, m.group(1), lamp=m.group(2))
            return Goal(family, m.group(1), m.group(2), count=2 if family == "two-object" else 1)
    raise MemdirError(f"cannot read a {family} goal from task text {task!r}")
