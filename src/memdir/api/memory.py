"""The Python API for agent builders: one object per memory store.

```python
from memdir import Memory

with Memory("./memory", model="local") as memory:     # created and initialized if missing
    memory.add("I moved to Lisbon in May.")           # the management role, on the local model
    hits = memory.search("where does the user live")  # ranked sections, no model needed
    answer = memory.ask("Where do I live?")           # an answer with citations and usage
# closed: the journal has every step; no process of memdir's is left running
```

Every call goes through the same harness as the CLI and the MCP server (profiles, metering,
the journal and index observers, the operator's guards), so an app built on this gets the
store's guarantees without re-implementing them. `AsyncMemory` is the same object for code
that already runs an event loop.

A Memory holds what a store keeps open (its search index, description cache and journal) and,
once it has written, this process's committer process (store/journal/commitd.py); `close()`
(or the end of a `with` block) lets all of them go, after the journal has every step.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from memdir.api import history
from memdir.api.add import AddOptions, result
from memdir.api.inputs import to_turns
from memdir.api.results import (
    AddResult,
    Answer,
    Citation,
    Operation,
    Profile,
    SearchHit,
    SearchMode,
)
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject
from memdir.models import Usage
from memdir.store import spec
from memdir.store.citations import resolve
from memdir.store.ingest_ledger import DERIVED
from memdir.store.journal import Journal, JournalStep, stop_committer
from memdir.store.sdk_layout import store_root, unconverted
from memdir.store.store import Store
from memdir.sync import SyncReport, sync_store
from memdir.tools.base import Meter, ToolArgs, ToolResult
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness, require_profile
from memdir.tools.schemas import Format, render
from memdir.tools.wiring import observer_factories, open_store, release_store

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from memdir.agents.output import RoleOutput
    from memdir.agents.read_search import Search
    from memdir.agents.sdk_folder import Conversion
    from memdir.integrations.anthropic_memory import MemdirMemoryTool
    from memdir.models import Model
    from memdir.tools.forget import Outcome

T = TypeVar("T")
A = TypeVar("A")
R = TypeVar("R")
S = TypeVar("S")
P = ParamSpec("P")


def takes(
    options: Callable[P, A],
) -> Callable[[Callable[[S, A], R]], Callable[Concatenate[S, P], R]]:
    """A method that takes `options`' parameters, checked by Python and the type checker alike,
    and hands its body the record they build: one signature for the sync and async faces.
    Defined here, beside the faces, so a call's path to the store crosses no extra module."""

    def wrap(body: Callable[[S, A], R]) -> Callable[Concatenate[S, P], R]:
        signature = inspect.signature(options)

        def method(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as exc:  # as Python says it for any method: its name, then why
                raise TypeError(f"{body.__qualname__}() {exc}") from None
            return body(self, options(*args, **kwargs))

        functools.update_wrapper(method, body)
        own = inspect.signature(body)
        this = next(iter(own.parameters.values()))
        method.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[this, *signature.parameters.values()], return_annotation=own.return_annotation
        )
        return method

    return wrap


class _Core:
    """What the sync and async faces share: the store, its harnesses, and the no-model work."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        create: bool = True,
        guards: Guards | None = None,
        index: bool = True,
        journal: bool = True,
        model: str | Model = "offline",
        **meta: Any,
    ) -> None:
        self.guards = guards or Guards()
        root = store_root(root)  # the SDK helper's folder: the memories/ inside it
        convert = create and unconverted(root)
        self.store = open_store(
            root, create=create, init=create and not convert, guards=self.guards, index=index, journal=journal
        )
        # What opening an SDK helper's folder converted (agents/sdk_folder.py), None for any other.
        self.converted: Conversion | None = None
        if convert:  # the operator's step, as init is: through a store without the guards
            from memdir.agents.sdk_folder import convert as convert_folder

            plain = Store(root, observers=observer_factories(index=index, journal=journal))
            self.converted = convert_folder(plain, role="api")
            spec.init(plain)
        self.model = model  # what `add` and `ask` run on, unless a call names another
        self.meta = {"role": "api", **meta}
        self._harnesses: dict[tuple[str, bool], Harness] = {}
        self._closed = False
        if journal:
            _JOURNALED.add(self)

    @property
    def root(self) -> str:
        return str(self.store.root)

    @property
    def closed(self) -> bool:
        return self._closed

    def _open(self) -> None:
        if self._closed:
            raise MemdirError(
                f"this Memory over {self.root} is closed (close() was called, or its with-block "
                f"ended); open a new Memory({self.root!r}) to use the store again"
            )
        self.store.finish_landing()  # one another process was stopped in: every call sees it whole

    def _close(self) -> None:
        """Land every journaled step and let go of what the store holds open; the committer
        process ends with the last journaled Memory of the process to close. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._harnesses.clear()
        _JOURNALED.discard(self)
        release_store(self.store)
        if not _JOURNALED:
            stop_committer()

    def harness(self, profile: Profile = "manage", *, reorganize: bool = False) -> Harness:
        """The harness for `profile`; `reorganize=True` marks its writes for the preservation guard."""
        self._open()
        key = (profile, reorganize)
        if key not in self._harnesses:
            meta = {**self.meta, "reorganize": True} if reorganize else self.meta
            self._harnesses[key] = Harness(self.store, profile, keep_indexes=True, **meta)
        return self._harnesses[key]

    def tools(self, profile: Profile = "manage", format: Format = "openai") -> list[JsonObject]:
        """Tool definitions of `profile` in a provider's wire format: OpenAI Chat Completions
        (`openai`), the OpenAI Responses API (`openai-responses`), Anthropic, MCP."""
        return render(list(self.harness(profile).specs.values()), format)

    def context(self, budget: int = spec.DEFAULT_CORE_BUDGET) -> str:
        """The core-memory prompt block: every root .md file, then the child directories to descend."""
        self._open()
        return spec.context(self.store, budget).text

    def _call(
        self, name: str, args: dict[str, Any] | str | None, profile: Profile, meta: dict[str, Any]
    ) -> ToolResult:
        self._open()
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                text = f"Error: the arguments are not valid JSON ({exc}); send a JSON object"
                return ToolResult(text, True, Meter(calls=1))
        reorganize = bool(meta.pop("reorganize", False))
        return self.harness(profile, reorganize=reorganize).call(name, args, **meta)

    def _search(self, query: str, k: int, mode: SearchMode | None, scope: str) -> list[SearchHit]:
        from memdir.search.embed import require_embedder
        from memdir.search.hybrid import check_mode, default_mode, search_sections, snippet
        from memdir.search.index import SearchIndex

        self._open()
        if k < 1:
            raise MemdirError(f"k must be at least 1, not {k}")
        chosen = mode or default_mode()
        check_mode(chosen)
        if chosen != "bm25":
            require_embedder()
        index = SearchIndex.for_store(self.store)
        hits: list[SearchHit] = []
        for h in search_sections(index, query, chosen, scope, k):
            try:
                text = self.store.read_text(h.path)
            except MemdirError:
                continue  # gone since the search
            hits.append(SearchHit.from_section(h, snippet(text, h, query), text))
        return hits

    def _history(self) -> list[JournalStep]:
        self._open()
        return history.steps(Journal(self.store.root))

    def _operations(self) -> list[Operation]:
        self._open()
        return history.operations(Journal(self.store.root))

    def _forget(
        self, text: str | None, line: str | None, file: str | None, secrets: bool, reason: str, dry_run: bool
    ) -> Outcome:
        from memdir.tools.forget import request_for, run

        self._open()
        request = request_for(
            self.store, text=text, line=line, file=file, secrets=secrets, reason=reason or "Memory.forget"
        )
        role = self.meta.get("role")
        return run(self.store, request, dry_run=dry_run, role=role if isinstance(role, str) else None)

    def _at(self, step: int | str) -> Snapshot:
        self._open()
        journal = Journal(self.store.root)
        chosen = history.pick(history.steps(journal), step)
        return Snapshot(chosen, journal)

    def _sync(self, remote: str | None) -> SyncReport:
        self._open()
        return sync_store(self.store, remote)

    def _answer(self, question: str, out: RoleOutput) -> Answer:
        ep = out.episode
        cites = tuple(self._resolve(c) for c in out.citations)
        opened = int(out.extra.get("files_opened") or 0)
        return Answer(
            question=question,
            answer=out.answer or "",
            citations=cites,
            usage=ep.usage if ep is not None else Usage(),
            model=out.model,
            baseline=out.baseline,
            tool_calls=ep.tool_calls if ep is not None else 0,
            rounds=ep.rounds if ep is not None else 0,
            files_opened=opened,
            reply=out.text,
        )

    def _resolve(self, text: str) -> Citation:
        """The citation as the evaluation resolves it (`store/citations.py`, one resolver)."""
        return Citation.from_resolved(text, resolve(self.store, text))

    async def _add(self, how: AddOptions) -> AddResult:
        from memdir.agents.ingest_batch import IngestSettings, ingest_batch

        self._open()
        given, source, skipped, ids = to_turns(
            how.data, speaker=how.speaker, when=how.date, session_gap=how.session_gap
        )
        m = _model(self.model if how.model is None else how.model)
        file = os.fspath(how.data) if isinstance(how.data, os.PathLike) else None
        done = await ingest_batch(
            m, self.store, given, derived=source == "text" or source in DERIVED, ids=ids, kind="add",
            file=file, settings=IngestSettings(curation=how.curation, feedback=how.feedback),
            on_placed=lambda _batch: self._open(),  # closed while it waited for another ingest
        )  # fmt: skip
        return result(done, m.name, source, skipped)

    async def _ask(
        self, question: str, model: str | Model | None, profile: Profile | None, how: Search = "auto"
    ) -> Answer:
        from memdir.agents.read_search import ask

        self._open()
        if profile is not None:
            require_profile(profile)
        m = _model(self.model if model is None else model)
        return self._answer(question, await ask(m, self.store, question, search=how, profile=profile))

    def anthropic_memory_tool(self, **kw: Any) -> MemdirMemoryTool:
        """A drop-in for the Anthropic SDK's memory tool, served by this object's `manage` harness
        (so its calls are metered with the rest)."""
        from memdir.integrations.anthropic_memory import MemdirMemoryTool

        return MemdirMemoryTool(self.harness("manage"), **kw)

    def mcp_server(self, profile: Profile = "manage") -> Server[Any]:
        """An MCP server (the SDK's low-level `Server`) over this store; run it on any transport."""
        from memdir.mcp.server import build_server

        return build_server(self.harness(profile))


_JOURNALED: weakref.WeakSet[_Core] = weakref.WeakSet()
"""The open memories of this process that journal their writes: the committer serves them all."""


def _model(model: str | Model) -> Model:
    from memdir.models import get_model

    return get_model(model) if isinstance(model, str) else model


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion; refuse, with what to use instead, inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise MemdirError("Memory's model calls cannot run inside an event loop; use memdir.AsyncMemory there")


class Memory(_Core):
    """A memory store, for synchronous code."""

    def call(
        self, name: str, args: ToolArgs | str | None = None, *, profile: Profile = "manage", **meta: Any
    ) -> ToolResult:
        """Run one tool call. `args` may be the JSON string an OpenAI tool call carries.

        A tool error is a result (`is_error=True`, text for the model), never an exception.
        """
        return self._call(name, args, profile, meta)

    @takes(AddOptions)
    def add(self, how: AddOptions) -> AddResult:
        """Remember `data` (text, chat messages, Turns or a chat-log file) through the one
        ingest `memdir ingest` runs, so both leave the same store; the keywords are an app's
        choices only (README, "Memory for your agent"; the rest: api/add.py)."""
        return _run(self._add(how))

    def search(
        self, query: str, *, k: int = 10, mode: SearchMode | None = None, scope: str = "/memories"
    ) -> list[SearchHit]:
        """The `k` best sections for `query`, best first; no model is called. `mode` defaults to
        hybrid (BM25 and embeddings fused) when the `embed` extra is installed, else bm25."""
        return self._search(query, k, mode, scope)

    def ask(
        self,
        question: str,
        *,
        model: str | Model | None = None,
        profile: Profile | None = None,
        search: Search = "auto",
    ) -> Answer:
        """Answer `question` from the store with the answering role (read-only), with citations
        resolved against the store, and what it cost. `search="read"`: the top sections by
        search, then one constrained model call citing the lines it was shown (the default for
        the local model); `"agentic"`: the tool-using search episode (the paper's search agent),
        at the product's round cap (`agents/roles.py`, `SEARCH_ROUNDS_PRODUCT`: 40) (the default
        for every other model; the offline model's lexical searcher)."""
        return _run(self._ask(question, model, profile, search))

    def history(self) -> list[JournalStep]:
        """Every step of the store's journal, oldest first (step 0: the store before its first
        journaled write). `operations()` groups them as `memdir history` does."""
        return self._history()

    def operations(self) -> list[Operation]:
        """The store's history grouped by what made it, oldest first: one `add` (its id is the
        `AddResult`'s `operation`), ingest, consolidate, adopt, revert, or one tool call made
        outside any of them, each with its steps and the files they changed."""
        return self._operations()

    def forget(
        self,
        text: str | None = None,
        *,
        line: str | None = None,
        file: str | None = None,
        secrets: bool = False,
        reason: str = "",
        dry_run: bool = False,
    ) -> Outcome:
        """Forget `text` (every line holding it), `line` (`PATH:N`), `file`, or every secret the
        scanner finds (`secrets=True`) for good: from the files, every version of the history,
        the search index and the ingest ledger (docs/forget.md). `dry_run` lists what would go.
        Raises `MemdirError` when nothing matched (nothing is changed then)."""
        return self._forget(text, line, file, secrets, reason, dry_run)

    def at(self, step: int | str) -> Snapshot:
        """A read-only view of the store as it was after `step` (an index, negative from the
        newest, or a commit prefix). Close it (or use it as a context manager) when done."""
        return self._at(step)

    def sync(self, remote: str | None = None) -> SyncReport:
        """Share this store with `remote` (any git remote; remembered after the first sync):
        fetch, merge fact by fact, land here as one operation, push (docs/sync.md)."""
        return self._sync(remote)

    def close(self) -> None:
        """Land every journaled step and let go of the index, caches and journal (and the
        committer process, with the process's last open Memory). Calling it again does nothing;
        any other call after it is refused, saying so."""
        self._close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemory(_Core):
    """A memory store, for code that runs an event loop: the same methods, awaitable."""

    async def call(
        self, name: str, args: ToolArgs | str | None = None, *, profile: Profile = "manage", **meta: Any
    ) -> ToolResult:
        return await asyncio.to_thread(self._call, name, args, profile, meta)

    @takes(AddOptions)
    async def add(self, how: AddOptions) -> AddResult:
        return await self._add(how)

    async def search(
        self, query: str, *, k: int = 10, mode: SearchMode | None = None, scope: str = "/memories"
    ) -> list[SearchHit]:
        return await asyncio.to_thread(self._search, query, k, mode, scope)

    async def ask(
        self,
        question: str,
        *,
        model: str | Model | None = None,
        profile: Profile | None = None,
        search: Search = "auto",
    ) -> Answer:
        return await self._ask(question, model, profile, search)

    async def history(self) -> list[JournalStep]:
        return await asyncio.to_thread(self._history)

    async def operations(self) -> list[Operation]:
        return await asyncio.to_thread(self._operations)

    async def forget(
        self,
        text: str | None = None,
        *,
        line: str | None = None,
        file: str | None = None,
        secrets: bool = False,
        reason: str = "",
        dry_run: bool = False,
    ) -> Outcome:
        return await asyncio.to_thread(self._forget, text, line, file, secrets, reason, dry_run)

    async def at(self, step: int | str) -> Snapshot:
        return await asyncio.to_thread(self._at, step)

    async def sync(self, remote: str | None = None) -> SyncReport:
        return await asyncio.to_thread(self._sync, remote)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Snapshot:
    """The store as it was after one step: its files in a private folder, searchable and
    readable through the read-only tools, never writable."""

    def __init__(self, step: JournalStep, journal: Journal) -> None:
        self.step = step
        self._dir = Path(tempfile.mkdtemp(prefix="memdir-at-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        history.materialize(journal, step.commit, self._dir)
        self._memory = Memory(self._dir, create=False, journal=False, role="api-history")

    def paths(self) -> list[str]:
        """Every markdown file of the snapshot, as /memories paths."""
        return [e.path.text for e in self._memory.store.files()]

    def read(self, path: str) -> str:
        return self._memory.store.read_text(path)

    def call(self, name: str, args: ToolArgs | str | None = None) -> ToolResult:
        """A read-only tool call (view, grep, toc, section_read, section_search) on the snapshot."""
        return self._memory.call(name, args, profile="search-hybrid")

    def search(
        self, query: str, *, k: int = 10, mode: SearchMode | None = None, scope: str = "/memories"
    ) -> list[SearchHit]:
        return self._memory.search(query, k=k, mode=mode, scope=scope)

    def ask(self, question: str, *, model: str | Model = "offline", search: Search = "auto") -> Answer:
        return self._memory.ask(question, model=model, search=search)

    def close(self) -> None:
        self._memory.close()
        self._cleanup()

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
