"""The Python API for agent builders: one object per memory store.

```python
from memdir import Memory

memory = Memory("./memory")                       # created and initialized if missing
tools = memory.tools("manage", format="openai")   # hand these to your model
result = memory.call("view", {"path": "/memories"})  # run what the model asked for
system = memory.context(budget=30_000)            # the core-memory block for the prompt
```

Every call goes through the same harness as the CLI and the MCP server (profiles, metering,
the journal and index observers, the operator's guards), so an app built on this gets the
store's guarantees without re-implementing them.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Literal

from memdir.store import spec
from memdir.tools.base import ToolResult
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.schemas import render
from memdir.tools.wiring import open_store

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from memdir.agents.ingest import IngestResult
    from memdir.agents.output import RoleOutput
    from memdir.integrations.anthropic_memory import MemdirMemoryTool
    from memdir.models import Model
    from memdir.stream import Turn

Format = Literal["openai", "anthropic", "mcp"]


class Memory:
    """A memory store and the harnesses that serve it, one per profile."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        create: bool = True,
        guards: Guards | None = None,
        **meta: Any,
    ) -> None:
        self.guards = guards or Guards()
        self.store = open_store(root, create=create, init=create, guards=self.guards)
        self.meta = {"role": "api", **meta}
        self._harnesses: dict[tuple[str, bool], Harness] = {}

    @property
    def root(self) -> str:
        return str(self.store.root)

    def harness(self, profile: str = "manage", *, reorganize: bool = False) -> Harness:
        """The harness for `profile`; `reorganize=True` marks its writes for the preservation guard."""
        key = (profile, reorganize)
        if key not in self._harnesses:
            meta = {**self.meta, "reorganize": True} if reorganize else self.meta
            self._harnesses[key] = Harness(self.store, profile, **meta)
        return self._harnesses[key]

    def tools(self, profile: str = "manage", format: Format = "openai") -> list[dict[str, Any]]:
        """Tool definitions of `profile` in a provider's wire format (OpenAI, Anthropic, MCP)."""
        return render(list(self.harness(profile).specs.values()), format)

    def call(
        self, name: str, args: dict[str, Any] | str | None = None, *, profile: str = "manage", **meta: Any
    ) -> ToolResult:
        """Run one tool call. `args` may be the JSON string an OpenAI tool call carries.

        A tool error is a result (`is_error=True`, text for the model), never an exception.
        """
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                from memdir.tools.base import Meter

                return ToolResult(
                    f"Error: the arguments are not valid JSON ({exc}); send a JSON object",
                    True,
                    Meter(calls=1),
                )
        reorganize = bool(meta.pop("reorganize", False))
        return self.harness(profile, reorganize=reorganize).call(name, args, **meta)

    def ingest(
        self, turns: list[Turn] | str | os.PathLike[str], *, model: str | Model = "offline", **kw: Any
    ) -> IngestResult:
        """Run the management role over `turns` (a list, or a JSONL / JSON file of them).

        `model` is a name (`local`, `openai/...`, `offline`) or a Model. Chunks whose episode
        changed nothing are listed in the result's `unchanged` and raise a `NoOpWarning`.
        """
        import asyncio

        from memdir.agents.ingest import ingest
        from memdir.stream import load_turns

        if isinstance(turns, str | os.PathLike):
            turns = load_turns(os.fspath(turns))
        return asyncio.run(ingest(self._model(model), self.store, turns, **kw))

    def ask(self, question: str, *, model: str | Model = "offline", **kw: Any) -> RoleOutput:
        """Answer `question` from the store with the search role (read-only), with citations."""
        import asyncio

        from memdir.agents.run import search

        return asyncio.run(search(self._model(model), self.store, question, **kw))

    @staticmethod
    def _model(model: str | Model) -> Model:
        from memdir.models import get_model

        return get_model(model) if isinstance(model, str) else model

    def context(self, budget: int = spec.DEFAULT_CORE_BUDGET) -> str:
        """The core-memory prompt block: every root .md file, then the child directories to descend."""
        return spec.context(self.store, budget).text

    def anthropic_memory_tool(self, **kw: Any) -> MemdirMemoryTool:
        """A drop-in for the Anthropic SDK's memory tool, served by this object's `manage` harness
        (so its calls are metered with the rest)."""
        from memdir.integrations.anthropic_memory import MemdirMemoryTool

        return MemdirMemoryTool(self.harness("manage"), **kw)

    def mcp_server(self, profile: str = "manage") -> Server[Any]:
        """An MCP server (the SDK's low-level `Server`) over this store; run it on any transport."""
        from memdir.mcp.server import build_server

        return build_server(self.harness(profile))
