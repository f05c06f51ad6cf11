"""The history pages: the journal's steps, one step's diff and the store as it was then, the
growth plots, and `diff --facts` between two chosen steps."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from memdir.analytics import integrity
from memdir.analytics.growth_plots import PLOTS
from memdir.errors import MemdirError, NotFoundError, PathError
from memdir.store.journal import find, group
from memdir.store.paths import ROOT, parse_memory_path
from memdir.store.window import Window, window_of
from memdir.ui import params, snapshots
from memdir.ui.pages import page, state
from memdir.ui.scratch import Scratch
from memdir.ui.views_store import crumbs, show_file, source

PAGE_ROWS = 100  # operations, or one operation's steps, per history page


def history(request: Request) -> Response:
    """One row per operation (an ingest, an add, a consolidate, one tool call...), newest first,
    as `memdir history` lists them; `?operation=ID` lists that operation's steps, newest first.
    Either list is shown PAGE_ROWS at a time (`from`: the row a page starts at, 0 first): one
    chat's ingest can take a thousand steps, and a page draws only its own rows. The journal is
    read once per request, its steps parsed and grouped in a single pass."""
    src, _store, urls = source(request)
    ui = state(request)
    journal = ui.sources.journal(src.sid)
    steps = journal.steps()
    groups = group(steps)
    ref = request.query_params.get("operation")
    at = params.optional_number(request.query_params.get("from"), "from") or 0
    chosen = None
    if ref is not None:
        try:
            chosen = find(groups, ref)
        except MemdirError as exc:
            raise NotFoundError(str(exc)) from None
    fates = None
    head = journal.head()
    if steps and head is not None and chosen is None:  # the replay behind the plots, once per head
        fates = _scratch(request).growth_data(journal, head, src.label)["fate"]
    rows: list[Any] = chosen.steps if chosen else groups
    total = len(rows)
    if at and at >= total:
        what = "steps in this operation" if chosen else "operations"
        raise NotFoundError(f"there are {total} {what}; no page starts at row {at + 1} (open the first page)")
    shown = rows[::-1][at : at + PAGE_ROWS]  # newest first
    op = chosen.id if chosen else None
    return page(
        request,
        "history.html",
        fates=fates,
        title=f"{src.label}: history" + (f" of operation {chosen.id}" if chosen else ""),
        src=src,
        urls=urls,
        operations=[] if chosen else shown,
        chosen=chosen,
        steps=shown if chosen else [],
        rows_page={
            "first": at + 1,
            "last": at + len(shown),
            "total": total,
            "previous": urls.history(op, max(0, at - PAGE_ROWS)) if at > 0 else None,
            "next": urls.history(op, at + PAGE_ROWS) if at + PAGE_ROWS < total else None,
        },
        count=len(steps),
        plots=PLOTS if steps and chosen is None else (),
        tab="history",
    )


MAX_DIFF_LINES = 5000  # a step that rewrote much of a store: the rest is left for `git` itself


def _diff_lines(patch: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    lines = patch.split("\n")
    for line in lines[:MAX_DIFF_LINES]:
        kind = "ctx"
        if line.startswith(("diff --git", "index ", "similarity", "rename ", "new file", "deleted file")):
            kind = "meta"
        elif line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        out.append((kind, line))
    if len(lines) > MAX_DIFF_LINES:
        out.append(("meta", f"... {len(lines) - MAX_DIFF_LINES} more lines of diff not shown"))
    return out


def step(request: Request) -> Response:
    src, _store, urls = source(request)
    journal = state(request).sources.journal(src.sid)
    st, steps = snapshots.pick(journal, _step(request))
    return page(
        request,
        "step.html",
        title=f"{src.label}: step {st.index}",
        src=src,
        urls=urls,
        st=st,
        count=len(steps),
        diff=_diff_lines(snapshots.diff(journal, st)),
        tab="history",
    )


def at_commit(request: Request) -> Response:
    """The step a journal commit names (a skill run's rows name the snapshot after each task)."""
    src, _store, urls = source(request)
    ref = request.query_params.get("commit") or ""
    steps = state(request).sources.journal(src.sid).steps()
    found = [s for s in steps if len(ref) >= 4 and s.commit.startswith(ref.lower())]
    if len(found) != 1:
        raise NotFoundError(f"no single step of this store has commit {ref!r}")
    return RedirectResponse(urls.step(found[0].index), status_code=307)


def step_tree(request: Request) -> Response:
    """The store as it was after a step: its files under the chosen folder, from the journal."""
    src, _store, urls = source(request)
    journal = state(request).sources.journal(src.sid)
    st, _steps = snapshots.pick(journal, _step(request))
    raw = request.query_params.get("path")
    folder = ROOT if not raw else parse_memory_path(raw)
    files = snapshots.files_at(journal, st)
    prefix = folder.text.rstrip("/") + "/"
    entries: dict[str, dict[str, Any]] = {}
    for path in sorted(files):
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :].split("/")
        name = rest[0]
        e = entries.setdefault(name, {"name": name, "dir": len(rest) > 1, "files": 0, "path": prefix + name})
        e["files"] += 1
    if not entries and not folder.is_root:
        raise NotFoundError(f"{folder.text} held no file after step {st.index}")
    ordered = sorted(entries.values(), key=lambda e: (not e["dir"], e["name"]))
    return page(
        request,
        "step_tree.html",
        title=f"{src.label}: step {st.index}",
        src=src,
        urls=urls,
        st=st,
        folder=folder,
        crumbs=crumbs(folder),
        entries=ordered,
        total=len(files),
        step=st.index,
        tab="history",
    )


def step_file(request: Request) -> Response:
    src, _store, urls = source(request)
    journal = state(request).sources.journal(src.sid)
    st, _steps = snapshots.pick(journal, _step(request))
    raw = request.query_params.get("path")
    if not raw:
        raise PathError("name a file: ?path=/memories/...")
    mp = parse_memory_path(raw)
    files = snapshots.files_at(journal, st)

    def read(start: int) -> Window:
        chunks = snapshots.read_at(journal, st, mp.text, files)
        return window_of(chunks, start, shown=mp.text, errors="replace")

    return show_file(
        request,
        src,
        urls,
        mp,
        read,
        lambda p: p in files or any(f.startswith(p + "/") for f in files),
        st.index,
    )


def facts(request: Request) -> Response:
    """`diff --facts` between two steps: every fact line of the older must be in the newer."""
    src, _store, urls = source(request)
    ui = state(request)
    journal = ui.sources.journal(src.sid)
    steps = journal.steps()
    result = None
    old_i = params.optional_number(request.query_params.get("old"), "step")
    new_i = params.optional_number(request.query_params.get("new"), "step")
    if steps and old_i is not None and new_i is not None:
        old, _ = snapshots.pick(journal, old_i)
        new, _ = snapshots.pick(journal, new_i)
        scratch = _scratch(request)
        with scratch.snapshot(journal, old) as before, scratch.snapshot(journal, new) as after:
            result = integrity.diff_facts(before, after)
    return page(
        request,
        "facts.html",
        title=f"{src.label}: diff --facts",
        src=src,
        urls=urls,
        steps=steps,
        old=old_i,
        new=new_i,
        result=result,
        tab="history",
    )


def _step(request: Request) -> int:
    """The step a path names: a word that is no number names no step (404, as when the
    route took only digits); a number too long for any step is refused (400)."""
    raw = str(request.path_params["step"])
    if not (raw.isascii() and raw.isdigit()):
        raise NotFoundError(f"no step {raw[:24]!r}: steps are numbered from 0; see the history")
    return params.number(raw, "step")


def growth_plot(request: Request) -> Response:
    src, _store, _urls = source(request)
    name = str(request.path_params["name"])
    if name not in PLOTS:
        raise NotFoundError(f"no plot {name!r}; the growth plots are {', '.join(PLOTS)}")
    ui = state(request)
    journal = ui.sources.journal(src.sid)
    head = journal.head()
    if head is None:
        raise NotFoundError("this store has no journal yet")
    return Response(_scratch(request).growth_file(journal, head, src.label, name), media_type="image/png")


def _scratch(request: Request) -> Scratch:
    found = state(request).scratch
    if found is None:
        raise MemdirError("this server has no private folder for past snapshots and plots")
    return found
