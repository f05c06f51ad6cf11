"""Profiles: the tools each role is handed, the tool sets that pair them, and the harness that
serves one profile.

A profile is only a list of tool names; the harness dispatches calls to those tools and
nothing else, so a `search` harness cannot write whatever the model asks for. A tool set
(`--tool-set`) names the pair of profiles a run gives its two roles: the builder's and search's.
"""

from __future__ import annotations

import threading
from typing import Any

from memdir.errors import MemdirError, ToolError
from memdir.store.store import Store
from memdir.tools.base import REGISTRY, Meter, ToolArgs, ToolConfig, ToolResult, ToolSpec, run_tool
from memdir.tools.folder_index_keeping import KEEP_INDEXES

MANAGE = ("view", "create", "str_replace", "insert", "delete", "rename", "grep")
SEARCH = ("view", "grep", "toc", "section_read")
PROFILES: dict[str, tuple[str, ...]] = {
    # the paper's manage tools, and `forget` for agent builders (BUILDERS_ONLY)
    "manage": (*MANAGE, "forget"),
    "search": SEARCH,
    "manage-bm25": (*MANAGE, "bm25_full_search"),
    "search-bm25": (*SEARCH, "bm25_full_search"),
    # memdir's own (not the paper's): hybrid search by section, BM25 and embeddings fused
    "manage-hybrid": (*MANAGE, "section_search"),
    "search-hybrid": (*SEARCH, "section_search"),
    # memdir's own, opt-in: the manage tools plus `health`, the store's findings
    # (docs/health.md)
    "manage-health": (*MANAGE, "health"),
    "shell": ("bash",),
    "chunk-retrieval": ("bm25_chunk_retrieve",),
    "chunk-retrieval-hybrid": ("hybrid_chunk_retrieve",),
    "folder": ("view", "grep", "rename"),
}
# Tools an agent builder's model is handed (Memory.tools, MCP, the drop-in) and a role's model is
# never shown (`agents/loop.tool_infos`): `forget` rewrites history, which is a person's request
# to honour ("forget that", docs/forget.md), not a curation move, and the study's roles keep the
# paper's contract (docs/study.md, "Tool contracts").
BUILDERS_ONLY = frozenset({"forget"})
EMBEDDING_TOOLS = frozenset({"section_search", "hybrid_chunk_retrieve"})  # need the `embed` extra
# Tool sets: name -> (build profile, search profile).
TOOL_SETS: dict[str, tuple[str, str]] = {
    "center": ("manage", "search"),
    "center-bm25": ("manage-bm25", "search-bm25"),
    "center-hybrid": ("manage-hybrid", "search-hybrid"),  # memdir's own: center plus `section_search`
    "shell": ("shell", "shell"),
}


def load_tools() -> dict[str, ToolSpec]:
    """Every tool, imported on first use: each module that defines tools registers them when it
    is imported. The optional modules (search, shell) may be absent in a partial install and then
    leave their profiles unavailable; one that is present but cannot import is an error."""
    import memdir.tools.files
    import memdir.tools.forget
    import memdir.tools.grep
    import memdir.tools.health
    import memdir.tools.read
    import memdir.tools.view  # each imported for the tools it registers

    try:
        import memdir.tools.search
    except ModuleNotFoundError as exc:
        if exc.name != "memdir.tools.search":
            raise
    try:
        import memdir.tools.shell  # noqa: F401  (imported for its registrations)
    except ModuleNotFoundError as exc:
        if exc.name != "memdir.tools.shell":
            raise
    return REGISTRY


def require_profile(profile: str) -> str:
    """`profile`, when PROFILES names it: the one check of a profile's name, so a caller that
    takes one (the API, the CLI, MCP) refuses a typo before it does anything, with the choices."""
    if profile not in PROFILES:
        raise MemdirError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    return profile


def profile_specs(profile: str) -> list[ToolSpec]:
    require_profile(profile)
    tools = load_tools()
    missing = [n for n in PROFILES[profile] if n not in tools]
    if missing:
        raise MemdirError(f"profile {profile!r} needs tools not available here: {', '.join(missing)}")
    if "bash" in PROFILES[profile]:
        from memdir.tools.sandbox import require_sandbox

        require_sandbox()  # refuse the profile outright: never an unconfined shell
    if EMBEDDING_TOOLS.intersection(PROFILES[profile]):
        from memdir.search.embed import require_embedder

        require_embedder()  # refuse before any call: the model is an optional install
    return [tools[n] for n in PROFILES[profile]]


class Harness:
    """One store served through one profile; meters every call and keeps the totals."""

    def __init__(
        self,
        store: Store,
        profile: str = "manage",
        *,
        config: ToolConfig | None = None,
        keep_indexes: bool = False,
        **meta: Any,
    ) -> None:
        """`keep_indexes` is memdir's folder index keeping (`tools/folder_index_keeping.py`):
        each write also keeps the folder indexes (`MEMORY.md`), so the store stays a valid
        memory after every call. The product's harnesses turn it on; the roles' leave it off, so
        a role's tools keep the base contract (docs/study.md, Tool contracts)."""
        self.store = store
        self.profile = profile
        self.specs = {s.name: s for s in profile_specs(profile)}
        self.config = ToolConfig(**(config or {}))  # tool settings, e.g. {"shell": ShellLimits(timeout=10)}
        if keep_indexes:
            self.config[KEEP_INDEXES] = True
        self.meta = {k: v for k, v in meta.items() if v is not None}
        self.meter = Meter()
        self._meter_lock = threading.Lock()  # the MCP server runs calls in parallel threads

    @property
    def read_only(self) -> bool:
        return all(s.read_only for s in self.specs.values())

    def call(self, name: str, args: ToolArgs | None = None, **meta: Any) -> ToolResult:
        spec = self.specs.get(name)
        if spec is None:
            result = ToolResult(
                f"Error: tool {name!r} is not available in the '{self.profile}' profile; "
                f"use one of: {', '.join(self.specs)}",
                True,
                Meter(calls=1),
            )
        else:
            merged = {**self.meta, **{k: v for k, v in meta.items() if v is not None}}
            self.store.finish_landing()  # one another process was stopped in: readers see it whole
            result = run_tool(spec, self.store, args or {}, merged, self.config)
        result.meter.bytes_returned = len(result.text.encode("utf-8"))
        with self._meter_lock:
            self.meter.add(result.meter)
        return result

    def call_or_raise(self, name: str, args: ToolArgs | None = None, **meta: Any) -> str:
        """For scripts and people: a tool error becomes an exception instead of a result."""
        result = self.call(name, args, **meta)
        if result.is_error:
            raise ToolError(result.text.removeprefix("Error: "))
        return result.text
