"""Reorganization passes over an existing store (preserve or condense): `memdir consolidate`'s
pass, and any caller that reorganizes a built store the same way (a pass that only moves files
brings its own role settings)."""

from __future__ import annotations

from memdir.agents.baselines import require_model
from memdir.agents.output import RoleOutput
from memdir.agents.record import RecordIds, RunRecord
from memdir.agents.roles import REORG_PASSES, Role, get_role
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
    role: Role | None = None,
) -> list[RoleOutput]:
    """Restructure the store in `passes` passes; 'preserve' and 'condense' differ by one prompt rule.
    The role is the product's (keeping memdir's keyed-fact conventions, as `memdir consolidate`
    needs) unless the caller brings its own (e.g. one with the paper's rules only, no keyed facts);
    `variant` labels the records."""
    if mode not in ("preserve", "condense"):
        raise MemdirError(f"reorganize mode must be 'preserve' or 'condense', not {mode!r}")
    require_model("reorganize", model)
    role = role or get_role(f"reorganize_{mode}")
    outs: list[RoleOutput] = []
    for n in range(1, passes + 1):
        harness = Harness(store, role.profile or "manage", role=role.name, variant=variant, reorg_pass=n)
        ids: RecordIds = {"variant": variant, "pass": n}
        values = {"core_memory": spec.context(store).text, "pass": n, "passes": passes}
        ep = await run_role(model, harness, role, record, ids, **values)
        outs.append(RoleOutput(role.name, model.name, ep.final, episode=ep))
    return outs
