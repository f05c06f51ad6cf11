"""`memdir search` and `memdir reindex`: the search index for people (files by BM25; sections by
BM25, meaning or both: memdir.search.hybrid)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, TypeVar

import click

from memdir.cli.root_opts import StoreCommand
from memdir.cli.store_cmds import _store
from memdir.errors import MemdirError
from memdir.search.analysis import best_lines, query_terms
from memdir.search.embed import require_embedder
from memdir.search.hybrid import MODES, search_sections, snippet
from memdir.search.index import SearchIndex
from memdir.search.live_first import PAST_MARK, live_above, past_shown, search_files, superseded
from memdir.store.store import Store


class _HasPath(Protocol):
    @property
    def path(self) -> str: ...


H = TypeVar("H", bound=_HasPath)


@click.command("search", cls=StoreCommand)
@click.argument("query")
@click.option(
    "--path", "scope", default="/memories", show_default=True, help="Folder or file to search within."
)
@click.option(
    "--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many results."
)
@click.option(
    "--mode",
    type=click.Choice(["files", *MODES]),
    default="files",
    show_default=True,
    help="files: whole files by BM25. bm25, dense, hybrid: sections, by keywords, by meaning "
    "(embeddings; needs `make embed-model`), or both fused.",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
def search_cmd(root: str, query: str, scope: str, top_k: int, mode: str, as_json: bool) -> None:
    """Rank the files of ROOT by BM25 for QUERY, or its sections with --mode (any text is
    accepted as a query)."""
    store = _store(root)
    if mode != "files":
        _sections(store, query, scope, top_k, mode, as_json)
        return
    try:
        hits = search_files(SearchIndex.for_store(store), query, scope, top_k)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    terms = query_terms(query)
    rows: list[dict[str, Any]] = []
    for h, text in _readable(store, hits):
        lines = text.split("\n")
        shown = live_above(lines, [(s.lineno, s.text) for s in best_lines(text, terms)])
        rows.append(
            {"path": h.path, "score": round(h.score, 4), "lines": [[n, t] for n, t in shown]}
            | _marks(lines, shown)
        )
    if as_json:
        click.echo(
            json.dumps(
                {"query": query, "path": scope, "terms": terms, "results": rows}, ensure_ascii=False, indent=2
            )
        )
        return
    if not rows:
        click.echo("no matches" if terms else "no searchable words in the query")
        return
    for i, r in enumerate(rows, start=1):
        click.secho(f"{i:3d}. {r['path']}  ({r['score']:.2f})", bold=True)
        _echo_lines(r["lines"], r["past_lines"])


def _marks(lines: list[str], shown: Sequence[tuple[int, str]]) -> dict[str, Any]:
    """A hit's past values among its shown lines, and whether it shows only past values
    (docs/retrieval.md, "Live values first")."""
    numbers = [n for n, _ in shown]
    return {"past_lines": list(past_shown(lines, numbers)), "superseded": superseded(lines, numbers)}


def _echo_lines(shown: Sequence[Sequence[Any]], past: Sequence[int]) -> None:
    for lineno, text in shown:
        click.echo(f"     {lineno}: {text}{PAST_MARK if lineno in past else ''}")


def _readable(store: Store, hits: Sequence[H]) -> Iterator[tuple[H, str]]:
    """Each hit with its file's text, skipping a file gone since the search."""
    for h in hits:
        try:
            yield h, store.read_text(h.path)
        except MemdirError:
            continue


def _sections(store: Store, query: str, scope: str, top_k: int, mode: str, as_json: bool) -> None:
    try:
        if mode != "bm25":
            require_embedder()
        hits = search_sections(SearchIndex.for_store(store), query, mode, scope, top_k)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    rows: list[dict[str, Any]] = []
    for h, text in _readable(store, hits):
        shown = snippet(text, h, query)
        rows.append(
            {
                "path": h.path,
                "heading": h.heading,
                "lines": [h.start, h.end],
                "score": round(h.score, 6),
                "ranks": h.ranks,
                "snippet": [[n, line] for n, line in shown],
            }
            | _marks(text.split("\n"), shown)
        )
    if as_json:
        out = {"query": query, "path": scope, "mode": mode, "results": rows}
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo(f"no section matches ({mode})")
        return
    for i, r in enumerate(rows, start=1):
        where = f"{r['lines'][0]}-{r['lines'][1]}"
        heading = f"  [{r['heading']}]" if r["heading"] else ""
        click.secho(f"{i:3d}. {r['path']}:{where}{heading}  ({r['score']:.4f})", bold=True)
        _echo_lines(r["snippet"], r["past_lines"])


@click.command("reindex", cls=StoreCommand)
@click.option("--sections", is_flag=True, help="Also build the section index (search --mode bm25).")
@click.option("--dense", is_flag=True, help="Also build section vectors (search --mode dense/hybrid).")
def reindex_cmd(root: str, sections: bool, dense: bool) -> None:
    """Rebuild ROOT's search index from its files (the files are the truth; nothing is lost).
    Section units and vectors are rebuilt too where they existed."""
    index = SearchIndex.for_store(_store(root))
    try:
        if dense:
            require_embedder()
        report = index.rebuild()
        click.echo(f"indexed {report.files} files in {report.seconds:.2f} s")
        if sections or dense:
            built = index.enable_units(dense)
            if built.rebuilt:
                what = "section units and vectors" if dense else "section units"
                click.echo(f"built {what} of {built.files} files in {built.seconds:.2f} s")
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    if index.units is not None:
        dense_name = index.units.dense
        click.echo(f"section index: {f'with vectors ({dense_name})' if dense_name else 'BM25 only'}")


def register(cli: click.Group) -> None:
    for cmd in (search_cmd, reindex_cmd):
        cli.add_command(cmd)
