"""The skill report's paired comparisons: each store variant against no-store on per-task success.

The claim is the paper's directional one, a store helps the executor, so each test is one-sided
(`greater`), as the conversational report tests a store against the closed-book floor; the test
itself is the studies' one sign test (`memdir/sign_test.py`). A task pairs with no-store's play of
the same game at the same place in the same chain, under the same executor and protocol: a task
no-store did not play is left out, not counted for or against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from memdir.sign_test import SIDEDNESS_LABELS, Sidedness, sign_test

BASELINE = "no-store"
SIDEDNESS: Sidedness = "greater"


def _item(row: Mapping[str, Any]) -> str:
    return f"{row['chain']}/{row['index']}/{row.get('game', '')}"


class Paired(TypedDict):
    """A variant's sign test against no-store on per-task success, in summary.json."""

    model: str
    protocol: str
    variant: str
    against: str
    score: str
    wins: int
    losses: int
    ties: int
    p_value: float
    sidedness: Sidedness


def comparisons(rows: Iterable[Mapping[str, object]], order: Iterable[str] = ()) -> list[Paired]:
    """A row per (model, protocol, variant) with a no-store cell beside it: the sign test of the
    variant's per-task success against no-store's, variants in `order` first."""
    rank = {v: i for i, v in enumerate(order)}
    success: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for r in rows:
        key = (str(r["model"]), str(r["protocol"]), str(r["variant"]))
        success.setdefault(key, {})[_item(r)] = float(bool(r["success"]))
    out: list[Paired] = []
    for model, protocol, variant in sorted(
        success, key=lambda k: (k[0], k[1], rank.get(k[2], len(rank)), k[2])
    ):
        base = success.get((model, protocol, BASELINE))
        if variant == BASELINE or base is None:
            continue
        t = sign_test(success[(model, protocol, variant)], base, SIDEDNESS)
        out.append({
            "model": model, "protocol": protocol, "variant": variant, "against": BASELINE,
            "score": "success", "wins": t.wins, "losses": t.losses, "ties": t.ties,
            "p_value": round(t.p_value, 6), "sidedness": SIDEDNESS,
        })  # fmt: skip
    return out


def paired_lines(paired: list[Paired]) -> list[str]:
    """The report's section; empty when the run has no no-store cell to compare with."""
    if not paired:
        return []
    many_models = len({r["model"] for r in paired}) > 1
    many_protocols = len({r["protocol"] for r in paired}) > 1
    lines = [
        "",
        "## Paired comparisons (sign test on per-task success)",
        "",
        "Each store variant against no-store on the same tasks (same chain, place and game), ties "
        "dropped; one-sided, as the claim is that a store helps: p is the chance of this many wins "
        "or more.",
        "",
        "| variant | against | wins | losses | ties | sidedness | p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in paired:
        parts = [r["model"]] * many_models + [r["protocol"]] * many_protocols + [r["variant"]]
        lines.append(
            f"| {' / '.join(parts)} | {r['against']} | {r['wins']} | {r['losses']} | {r['ties']} | "
            f"{SIDEDNESS_LABELS.get(r['sidedness'], r['sidedness'])} | {r['p_value']:.3f} |"
        )
    return lines
