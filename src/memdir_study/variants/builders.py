"""The conversational variants of the study (docs/study.md, Memory variants), one builder each.

- closed-book: no store at all; the search model answers alone (the floor).
- chunk-retrieval: the stream's chunks, one file each, BM25-indexed; search gets only
  `bm25_chunk_retrieve` (top 3 chunks in full).
- chunk-retrieval-hybrid (memdir's, not the study's): the same chunks, searched with
  `hybrid_chunk_retrieve` (BM25 and embeddings fused by section, top 3 chunks in full).
- verbatim-dump: one file per session (see `dump.py`), zero model cost.
- foldered: the dump, then a model moves its session files into folders; verified move-only
  (every file's bytes identical before and after).
- reorg-preserve / reorg-condense: the dump, then a model restructures it in passes; every
  fact line of the dump is looked for in the result (`diff --facts`) and the outcome recorded.
- agent-curated: built from empty by the management role, chunk by chunk (the study's agentic
  episode, whatever the model), its prompt teaching the paper's taxonomy principles only.
- agent-curated-keyed (memdir's, not the study's): the same episode, its prompt adding memdir's
  conventions (keyed facts, one live value per key, partition by person then attribute).
- split-curated (memdir's, not the study's): built from empty by split curation, chunk by chunk:
  one schema-held extraction call, validation, the offline curator's filing (docs/curation.md).

foldered, reorg-* and split-curated need a model: with the offline baseline policies they are
unavailable, and say so. Each is registered at the end of this module with its traits
(registry.py); a new variant is one builder and one `register(...)` here.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Literal

from memdir.agents import manage_chunk, reorganize
from memdir.agents.baselines import require_model
from memdir.agents.output import RoleExtra
from memdir.analytics.integrity import diff_facts
from memdir.errors import MemdirError
from memdir.search.chunks import build_chunk_store
from memdir.search.embed import require_embedder
from memdir.store.store import Store
from memdir.tools.wiring import open_store
from memdir_study.roles import FolderingError, folder
from memdir_study.variants.base import BuildChecks, BuildContext, Built, FoldersMoved, VariantUnavailable
from memdir_study.variants.dump import write_dump
from memdir_study.variants.registry import ConversationVariant, register, variant_role

MAX_MISSING_SHOWN = 20


async def closed_book(ctx: BuildContext) -> Built:
    return Built("closed-book", None, None)


async def chunk_retrieval(ctx: BuildContext) -> Built:
    store = build_chunk_store(open_store(ctx.store_dir, create=True), ctx.sample.chunks())
    return Built("chunk-retrieval", store, "chunk-retrieval")


async def chunk_retrieval_hybrid(ctx: BuildContext) -> Built:
    try:
        require_embedder()
    except MemdirError as exc:
        raise VariantUnavailable(f"chunk-retrieval-hybrid needs the embedding model: {exc}") from None
    store = build_chunk_store(open_store(ctx.store_dir, create=True), ctx.sample.chunks())
    return Built("chunk-retrieval-hybrid", store, "chunk-retrieval-hybrid")


async def verbatim_dump(ctx: BuildContext) -> Built:
    store = open_store(ctx.store_dir, create=True)
    write_dump(store, ctx.sample)
    return Built("verbatim-dump", store, ctx.profiles()[1])


def _needs_model(ctx: BuildContext, variant: str, role: str) -> None:
    """Refuse up front, before the dump is written, a variant whose role no baseline plays."""
    try:
        require_model(role, ctx.model)
    except MemdirError as exc:
        raise VariantUnavailable(
            f"{variant} needs a model to design the new structure: {exc} "
            "(run it with --builder-model provider/model)"
        ) from None


async def foldered(ctx: BuildContext) -> Built:
    _needs_model(ctx, "foldered", "folder")
    store = open_store(ctx.store_dir, create=True)
    files = write_dump(store, ctx.sample)
    try:
        out = await folder(ctx.model, store, record=ctx.record)
    except FolderingError as exc:
        raise FolderingError(f"foldered is invalid, the pass was not move-only: {exc}") from exc
    moves = out.extra.get("moves", {})
    checks = BuildChecks(
        foldering=FoldersMoved(verified=True, files=len(files) + 1, moved=len(moves), moves=moves)
    )
    return Built("foldered", store, ctx.profiles()[1], checks)


async def _reorg(ctx: BuildContext, mode: str) -> Built:
    variant = f"reorg-{mode}"
    _needs_model(ctx, variant, "reorganize")
    store = open_store(ctx.store_dir, create=True)
    write_dump(store, ctx.sample)
    with tempfile.TemporaryDirectory(prefix="memdir-dump-") as tmp:
        baseline_dir = Path(tmp) / "dump"
        shutil.copytree(ctx.store_dir, baseline_dir, ignore=shutil.ignore_patterns(".memdir"))
        baseline = Store(baseline_dir)  # read once, for the fact diff: no views follow it
        role = variant_role(f"reorganize_{mode}", variant)
        await reorganize(ctx.model, store, mode, record=ctx.record, variant=variant, role=role)
        diff = diff_facts(baseline, store).as_json()
    missing = diff["missing"]
    diff["missing_count"] = len(missing)
    diff["missing"] = missing[:MAX_MISSING_SHOWN]
    return Built(variant, store, ctx.profiles()[1], {"diff_facts": diff})


async def reorg_preserve(ctx: BuildContext) -> Built:
    return await _reorg(ctx, "preserve")


async def reorg_condense(ctx: BuildContext) -> Built:
    return await _reorg(ctx, "condense")


async def _curated(ctx: BuildContext, variant: str) -> Built:
    """Built from empty by the management role's agentic episode, chunk by chunk; the variant
    names its prompt (its entry's `keyed`): the study's taxonomy rules, or memdir's own."""
    builder_profile, search_profile = ctx.profiles()
    store = open_store(ctx.store_dir, create=True, init=True)
    chunks = ctx.sample.chunks()
    for i, chunk in enumerate(chunks, start=1):
        await manage_chunk(
            ctx.model,
            store,
            chunk,
            variant=variant,
            record=ctx.record,
            profile=builder_profile,
            curation="agentic",
            role=variant_role("management", variant),
        )
        ctx.tick(i, len(chunks))
    return Built(variant, store, search_profile)


async def agent_curated(ctx: BuildContext) -> Built:
    return await _curated(ctx, "agent-curated")


async def agent_curated_keyed(ctx: BuildContext) -> Built:
    return await _curated(ctx, "agent-curated-keyed")


_Totalled = Literal[
    "facts_proposed", "facts_kept", "keyed_written", "keyed_withheld", "distilled_written", "model_calls"
]


async def split_curated(ctx: BuildContext) -> Built:
    if ctx.model.is_offline:
        raise VariantUnavailable(
            "split-curated needs a model for its extraction call; the offline curator is agent-curated "
            "offline (run it with --builder-model local, or any provider/model)"
        )
    search_profile = ctx.profiles()[1]
    store = open_store(ctx.store_dir, create=True, init=True)
    chunks = ctx.sample.chunks()
    split: list[RoleExtra] = []
    for i, chunk in enumerate(chunks, start=1):
        out = await manage_chunk(
            ctx.model, store, chunk, variant="split-curated", record=ctx.record, curation="split",
            role=variant_role("management", "split-curated"),
        )  # fmt: skip
        split.append(out.extra)
        ctx.tick(i, len(chunks))
    keys: tuple[_Totalled, ...] = (
        "facts_proposed",
        "facts_kept",
        "keyed_written",
        "keyed_withheld",
        "distilled_written",
        "model_calls",
    )
    totals: dict[str, int] = {k: sum(int(str(e.get(k, 0))) for e in split) for k in keys}
    return Built("split-curated", store, search_profile, {"split_curation": totals})


_KEYED = "memdir's conventions in the management prompt"
for _variant in (
    ConversationVariant("closed-book", closed_book, builds_store=False),
    ConversationVariant("chunk-retrieval", chunk_retrieval, search_form="search_chunks"),
    ConversationVariant(
        "chunk-retrieval-hybrid", chunk_retrieval_hybrid, note="needs make embed-model", study=False,
        search_form="search_chunks",
    ),
    ConversationVariant("verbatim-dump", verbatim_dump, search_form="search_dump"),
    ConversationVariant("foldered", foldered, needs_model=True, search_form="search_foldered"),
    ConversationVariant("reorg-preserve", reorg_preserve, needs_model=True, organized=True),
    ConversationVariant("reorg-condense", reorg_condense, needs_model=True, organized=True),
    ConversationVariant("agent-curated", agent_curated, builds_with_tools=True, organized=True),
    ConversationVariant(
        "agent-curated-keyed", agent_curated_keyed, note=_KEYED, study=False, builds_with_tools=True,
        organized=True, keyed=True,
    ),
    ConversationVariant(
        "split-curated", split_curated, note="split curation",
        study=False, needs_model=True, keyed=True,
    ),
):  # fmt: skip
    register(_variant)
