"""`memdir search` and `memdir reindex`: the BM25 index for people."""

from __future__ import annotations

import json
from typing import Any

import click

from memdir.cli.store_cmds import _store
from memdir.errors import MemdirError
from memdir.store.analysis import best_lines, query_terms
from memdir.store.index import SearchIndex


@click.command("search")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
@click.argument("query")
@click.option(
    "--path", "scope", default="/memories", show_default=True, help="Folder or file to search within."
)
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True, help="How many files.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
def search_cmd(root: str, query: str, scope: str, top_k: int, as_json: bool) -> None:
    """Rank the files of ROOT by BM25 for QUERY (plain keywords; any text is accepted)."""
    store = _store(root)
    try:
        hits = SearchIndex.for_store(store).search(query, scope, top_k)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None
    terms = query_terms(query)
    rows: list[dict[str, Any]] = []
    for h in hits:
        try:
            text = store.read_text(h.path)
        except MemdirError:
            continue
        lines = best_lines(text, terms)
        rows.append(
            {"path": h.path, "score": round(h.score, 4), "lines": [[s.lineno, s.text] for s in lines]}
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
        for lineno, text in r["lines"]:
            click.echo(f"     {lineno}: {text}")


@click.command("reindex")
@click.argument("root", type=click.Path(exists=True, file_okay=False))
def reindex_cmd(root: str) -> None:
    """Rebuild ROOT's search index from its files (the files are the truth; nothing is lost)."""
    report = SearchIndex.for_store(_store(root)).rebuild()
    click.echo(f"indexed {report.files} files in {report.seconds:.2f} s")


def register(cli: click.Group) -> None:
    for cmd in (search_cmd, reindex_cmd):
        cli.add_command(cmd)
