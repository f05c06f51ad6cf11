"""The live store's pages: the start page, the tree (one folder at a time), a file, search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memdir.errors import MemdirError, PathError
from memdir.search.hybrid import MODES
from memdir.store.paths import ROOT, MemoryPath, parse_memory_path
from memdir.store.store import Store
from memdir.store.window import PAGE_BYTES, Window, read_window
from memdir.ui import listing, params
from memdir.ui.pages import page, state, visible_sources
from memdir.ui.render import parse_lines, render_markdown, source_lines
from memdir.ui.sources import Source
from memdir.ui.urls import Urls, turn_url

CITED_CONTEXT = 10  # a cited range past a file's first page opens this many lines before it


def index(request: Request) -> Response:
    shown = visible_sources(request)
    ui = state(request)
    own = [s for s in shown if s.run is None]
    if len(own) == 1 and ui.runs is None:
        return RedirectResponse(Urls(own[0].sid).tree(), status_code=307)
    return page(request, "index.html", title="memdir", stores=own, urls=Urls)


def source(request: Request) -> tuple[Source, Store, Urls]:
    ui = state(request)
    sid = str(request.path_params["sid"])
    src = ui.sources.get(sid)
    return src, ui.sources.store(sid), Urls(sid)


def folder_param(request: Request) -> MemoryPath:
    raw = request.query_params.get("path")
    return ROOT if not raw else parse_memory_path(raw)


def tree(request: Request) -> Response:
    """The tree at one folder: its children listed, child folders opened on demand."""
    src, store, urls = source(request)
    folder = folder_param(request)
    if not store.is_dir(folder):
        if store.exists(folder):
            return RedirectResponse(urls.file(folder.text), status_code=307)
        raise MemdirError(f"{folder.text} does not exist; open the root of the tree")
    found = listing.list_folder(store, folder, _start(request))
    return page(
        request,
        "tree.html",
        title=f"{src.label}: {folder.text}",
        src=src,
        urls=urls,
        folder=folder,
        crumbs=crumbs(folder),
        listing=found,
        budget=listing.budget(store, root=found if folder.is_root else None),
        step=None,
        tab="tree",
    )


def children(request: Request) -> Response:
    """One folder's children as a fragment, for the tree's lazy expansion."""
    src, store, urls = source(request)
    folder = folder_param(request)
    if not store.is_dir(folder):
        raise PathError(f"{folder.text} is not a folder")
    found = listing.list_folder(store, folder, _start(request))
    return page(request, "_children.html", src=src, urls=urls, listing=found, fragment=True)


def _start(request: Request) -> int:
    """The entry a folder's page starts at (`from`, 0 for the first)."""
    return params.optional_number(request.query_params.get("from"), "entry") or 0


def crumbs(mp: MemoryPath) -> list[tuple[str, MemoryPath]]:
    out = [("memories", ROOT)]
    for i in range(1, len(mp.parts) + 1):
        out.append((mp.parts[i - 1], MemoryPath(mp.parts[:i])))
    return out


def locator_href(src: Source) -> Any:
    """Links from a locator to its source turn, for a store built from a benchmark sample."""
    if src.bench is None:
        return lambda _loc: None
    bench, sample = src.bench
    return lambda loc: turn_url(bench, sample, loc)


def exists_in(store: Store) -> Any:
    def exists(target: str) -> bool:
        try:
            return store.exists(parse_memory_path(target))
        except PathError:
            return False

    return exists


def window_for(request: Request, read: Callable[[int], Window]) -> Window:
    """The page of the file the request asks for: from its `from` line; else the first page,
    or, when the cited `lines` start past it, the page from a little before them."""
    start = params.optional_number(request.query_params.get("from"), "line")
    if start is not None:
        return read(max(1, start))
    first = read(1)
    lines = parse_lines(request.query_params.get("lines"))
    if lines is None or lines[0] <= first.last:
        return first
    return read(max(1, lines[0] - CITED_CONTEXT))


def show_file(
    request: Request,
    src: Source,
    urls: Urls,
    mp: MemoryPath,
    read: Callable[[int], Window],
    exists: Any,
    step: int | None,
    **extra: Any,
) -> Response:
    """The file page, for the live store and for a past step alike: one page of the file
    (`store/window.py`), with links to the pages before and after it."""
    lines = parse_lines(request.query_params.get("lines"))
    view = request.query_params.get("view", "rendered")
    window = window_for(request, read)
    rendered = None
    if view != "source":
        rendered = render_markdown(
            window.text,
            href=lambda p: urls.file(p, step=step),
            exists=exists,
            locator_href=locator_href(src),
            lines=lines,
            first=window.first,
        )
    shown_view = "source" if rendered is None else None
    before, after = window.previous_first(), window.next_first
    return page(
        request,
        "file.html",
        title=f"{src.label}: {mp.text}",
        src=src,
        urls=urls,
        path=mp,
        crumbs=crumbs(mp.parent),
        rendered=rendered,
        html=Markup(rendered.html) if rendered is not None else None,  # built escaped by render.py
        source=source_lines(window.text, lines, window.first) if rendered is None else None,
        window=window,
        page_bytes=PAGE_BYTES,
        previous=None if before is None else urls.file(mp.text, step=step, view=shown_view, start=before),
        next=None if after is None else urls.file(mp.text, step=step, view=shown_view, start=after),
        lines=lines,
        lines_raw=request.query_params.get("lines"),
        view="source" if rendered is None else "rendered",
        step=step,
        tab="tree",
        **extra,
    )


def file(request: Request) -> Response:
    src, store, urls = source(request)
    raw = request.query_params.get("path")
    if not raw:
        raise PathError("name a file: ?path=/memories/...")
    mp = parse_memory_path(raw)
    if store.is_dir(mp):
        return RedirectResponse(urls.tree(mp.text), status_code=307)
    touched = [s for s in state(request).sources.journal(src.sid).steps() if _touches(s.changes, mp.text)]

    def read(start: int) -> Window:
        return read_window(store, mp, start)

    return show_file(request, src, urls, mp, read, exists_in(store), None, touched=touched[-20:])


def _touches(changes: Any, path: str) -> bool:
    return any(c.path == path or c.new_path == path for c in changes)


def search(request: Request) -> Response:
    """Search by section through the Memory API, in any of its modes."""
    src, _store, urls = source(request)
    q = request.query_params.get("q", "").strip()
    mode = request.query_params.get("mode") or None
    hits: list[Any] = []
    error = None
    if q:
        try:
            hits = state(request).sources.memory(src.sid).search(q, k=20, mode=mode)  # type: ignore[arg-type]
        except (MemdirError, ImportError) as exc:
            error = f"{exc}" if isinstance(exc, MemdirError) else f"this mode needs the embed extra ({exc})"
    return page(
        request,
        "search.html",
        title=f"{src.label}: search",
        src=src,
        urls=urls,
        q=q,
        mode=mode or "",
        modes=MODES,
        hits=hits,
        error=error,
        tab="search",
    )
