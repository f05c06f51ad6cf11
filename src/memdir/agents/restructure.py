"""Restructuring passes over an existing store: reorganization (preserve or condense) and
foldering (move only, verified byte-identical afterwards)."""

from __future__ import annotations

import hashlib

from memdir.agents.baselines import require_model
from memdir.agents.output import RoleOutput
from memdir.agents.record import RunRecord
from memdir.agents.roles import REORG_PASSES, get_role
from memdir.agents.run import run_role
from memdir.errors import MemdirError
from memdir.models import Model
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness


async def reorganize(
    model: Model,
    store: Store,
    mode: str = "preserve",
    *,
    passes: int = REORG_PASSES,
    record: RunRecord | None = None,
    variant: str | None = None,
) -> list[RoleOutput]:
    """Restructure the store in `passes` passes; 'preserve' and 'condense' differ by one prompt rule.
    `variant` (default the study's `reorg-<mode>`) names the prompt: memdir's own passes
    (`consolidate`) keep its keyed-fact conventions (`roles.KEYED_VARIANTS`)."""
    if mode not in ("preserve", "condense"):
        raise MemdirError(f"reorganize mode must be 'preserve' or 'condense', not {mode!r}")
    require_model("reorganize", model)
    variant = variant or f"reorg-{mode}"
    role = get_role(f"reorganize_{mode}", variant)
    outs: list[RoleOutput] = []
    for n in range(1, passes + 1):
        harness = Harness(store, role.profile or "manage", role=role.name, variant=variant, reorg_pass=n)
        ids = {"variant": variant, "pass": n}
        values = {"core_memory": spec.context(store).text, "pass": n, "passes": passes}
        ep = await run_role(model, harness, role, record, ids, **values)
        outs.append(RoleOutput(role.name, model.name, ep.final, episode=ep))
    return outs


def file_digests(store: Store) -> dict[str, str]:
    """{memory path: sha256 of its bytes} for every visible file."""
    return {e.path.text: hashlib.sha256(e.disk.read_bytes()).hexdigest() for e in store.files(suffix="")}


class FolderingError(MemdirError):
    """The foldering pass changed bytes, or lost or added a file: the variant is invalid."""


def verify_moves(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """The moves (old path -> new path) if `after` holds exactly the same files' bytes, else raise."""
    if sorted(before.values()) != sorted(after.values()):
        lost = sorted(p for p, d in before.items() if d not in set(after.values()))
        new = sorted(p for p, d in after.items() if d not in set(before.values()))
        raise FolderingError(
            f"foldering changed file contents: missing bytes of {lost[:5]}, new bytes in {new[:5]}"
        )
    by_digest: dict[str, list[str]] = {}
    for p, d in sorted(after.items()):
        by_digest.setdefault(d, []).append(p)
    moves: dict[str, str] = {}
    for p, d in sorted(before.items()):
        targets = by_digest[d]
        dest = p if p in targets else targets[0]
        targets.remove(dest)
        if dest != p:
            moves[p] = dest
    return moves


async def folder(model: Model, store: Store, *, record: RunRecord | None = None) -> RoleOutput:
    """Move the dump's session files into folders (view, grep, rename only), then verify the bytes."""
    require_model("folder", model)
    role = get_role("folder")
    harness = Harness(store, role.profile or "folder", role=role.name, variant="foldered")
    before = file_digests(store)
    ep = await run_role(
        model, harness, role, record, {"variant": "foldered"}, core_memory=spec.context(store).text
    )
    moves = verify_moves(before, file_digests(store))
    if record is not None:
        record.write("foldering_verified", role=role.name, moves=moves, files=len(before))
    return RoleOutput(role.name, model.name, ep.final, episode=ep, extra={"moves": moves})
