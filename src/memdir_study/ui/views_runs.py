"""The runs pages: the run folders found under --runs, a run's report with its plots, its
answers with their citations opening the cited lines, and a benchmark's source turn."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from memdir.errors import MemdirError, NotFoundError, PathError
from memdir.store.paths import parse_memory_path
from memdir.ui import params
from memdir.ui.pages import page, state
from memdir.ui.render import render_markdown
from memdir.ui.urls import Urls, run_url
from memdir_study.bench import DataUnavailable, Sample, UnknownSample, load_sample
from memdir_study.skills.folder import TASKS
from memdir_study.ui import runs as runs_mod
from memdir_study.ui import table_page

PAGE_ROWS = 100
ASSET_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}


def _runs_dir(request: Request) -> Path:
    ui = state(request)
    if ui.runs is None:
        raise NotFoundError("this server was started without --runs DIR, so it shows no runs")
    return ui.runs


def runs(request: Request) -> Response:
    found = runs_mod.find_runs(_runs_dir(request))
    return page(request, "runs.html", title="runs", found=found, run_url=run_url, tab="runs")


def _open(request: Request) -> runs_mod.Run:
    name = request.query_params.get("name") or ""
    return runs_mod.open_run(_runs_dir(request), name, state(request).sources)


def run(request: Request) -> Response:
    r = _open(request)
    report = None
    if r.store.exists("/memories/report.md"):
        text = r.store.read_text("/memories/report.md")
        report = Markup(
            render_markdown(
                text,
                href=lambda p: p,
                exists=lambda _p: True,
                image_src=lambda src: _asset_url(r.name, src),
            ).html
        )
    table = (
        table_page.read_page(r.store, parse_memory_path(f"/memories/{TASKS}"), 0, PAGE_ROWS)
        if r.kind == "skills"
        else table_page.TablePage(0)
    )
    return page(
        request,
        "run.html",
        title=f"run {r.name}",
        r=r,
        report=report,
        rows=table.rows,
        more=table.more,
        malformed=table.malformed,
        chain_sid=lambda row: runs_mod.store_id(r.name, str(row.get("variant")), f"chain-{row.get('chain')}"),
        urls=Urls,
        run_url=run_url,
        tab="runs",
    )


def _asset_url(run: str, src: str) -> str | None:
    if "://" in src or src.startswith("/") or Path(src).suffix.lower() not in ASSET_TYPES:
        return None  # only the run's own plots are shown; anything else stays a link
    return run_url(run, "asset", path=src)


def asset(request: Request) -> Response:
    """A plot of the run folder, read through the run's confined store."""
    r = _open(request)
    raw = request.query_params.get("path") or ""
    kind = ASSET_TYPES.get(Path(raw).suffix.lower())
    if kind is None:
        raise PathError("only a run's .png and .svg plots are served")
    mp = parse_memory_path("/memories/" + raw.lstrip("/"))
    return Response(r.store.read_bytes(mp), media_type=kind)


def answers(request: Request) -> Response:
    """A page of the run's answers: only its rows are parsed and kept (`table_page.py`);
    the filters' choices are the run's cells (its stores) and the manifest's variants, so no
    row past the page is read for them."""
    r = _open(request)
    if r.kind != "eval":
        raise NotFoundError(f"{r.name} is a skill run; its tasks are on its own page")
    variant = request.query_params.get("variant") or ""
    conversation = request.query_params.get("conversation") or ""
    at = params.optional_number(request.query_params.get("from"), "from") or 0
    table = table_page.read_page(
        r.store,
        parse_memory_path("/memories/answers.jsonl"),
        at,
        PAGE_ROWS,
        {"variant": variant, "conversation": conversation},
    )
    stores = {s.label: s.sid for s in r.stores}
    cells = [label.split("/") for label in stores]
    listed = r.manifest.get("variants")
    variants = {c[2] for c in cells if len(c) == 3} | {str(row.get("variant")) for row in table.rows}
    if isinstance(listed, list):
        variants |= {v for v in listed if isinstance(v, str)}
    conversations = {c[1] for c in cells if len(c) == 3} | {
        str(row.get("conversation")) for row in table.rows
    }
    return page(
        request,
        "answers.html",
        title=f"run {r.name}: answers",
        r=r,
        rows=table.rows,
        total=table.total,
        malformed=table.malformed,
        at=at,
        step=PAGE_ROWS,
        variant=variant,
        conversation=conversation,
        variants=sorted(variants),
        conversations=sorted(conversations),
        cell_sid=lambda row: stores.get(
            f"{row.get('benchmark')}/{row.get('conversation')}/{row.get('variant')}"
        ),
        urls=Urls,
        run_url=run_url,
        tab="runs",
    )


@lru_cache(maxsize=8)
def _sample(benchmark: str, sample: str) -> Sample:
    return load_sample(benchmark, sample)


def turn(request: Request) -> Response:
    """The turn a locator cites, in its session, from the benchmark's own loader."""
    bench = request.query_params.get("bench") or ""
    sample_id = request.query_params.get("sample") or ""
    loc = request.query_params.get("loc") or ""
    try:
        sample = _sample(bench, sample_id)
    except (DataUnavailable, UnknownSample) as exc:
        raise MemdirError(str(exc)) from None
    target = next((t for t in sample.turns if t.locator == loc), None)
    if target is None:
        raise NotFoundError(f"{bench} {sample_id} has no turn {loc!r}")
    session: list[Any] = [t for t in sample.turns if t.session == target.session]
    return page(
        request,
        "turn.html",
        title=f"{bench} {sample_id} {loc}",
        bench=bench,
        sample=sample_id,
        target=target,
        session=session,
        tab="runs",
    )
