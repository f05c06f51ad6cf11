"""Store health: stats, history, growth, check, diff --facts."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memdir.cli.renamed import Renamed
from memdir.cli.root_opts import StoreCommand
from memdir.errors import MemdirError
from memdir.store import spec
from memdir.store.store import Store

if TYPE_CHECKING:
    from memdir.store.journal import JournalStep


def _store(root: str, *, journaled: bool = False) -> Store:
    """Read only: no search index follows it, nor the journal unless `journaled` (history: so a landing
    a kill stopped, which opening the store finishes, is listed as itself; Store.finish_landing)."""
    try:
        if journaled:
            from memdir.tools.wiring import open_store

            return open_store(root, index=False)
        return Store(root)
    except MemdirError as exc:
        raise click.ClickException(str(exc)) from None


def _fmt(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


@click.command("stats", cls=StoreCommand)
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
def stats_cmd(root: str, as_json: bool) -> None:
    """Store profile, shape panel and taxonomy-contract panel (B1-B4) of ROOT."""
    from memdir.analytics.stats import KEYS, MEANING, store_stats

    st = store_stats(_store(root))
    record = st.as_json()
    if as_json:
        click.echo(json.dumps(record, indent=2))
        return
    from rich.console import Console  # the table only: `--json` does without rich
    from rich.table import Table

    table = Table(title=f"memdir stats {root}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    for k in KEYS:
        meaning, value = MEANING[k], st.values.get(k)
        if value is None:
            meaning += f" [undefined: {st.reasons.get(k, '?')}]"
        table.add_row(k, _fmt(value), meaning)
    Console().print(table)
    click.echo(f"units measured by B1-B4 (40+ characters): {st.details.get('units_measured')}")
    for u in st.details.get("unread", []):
        click.echo(f"not read: {u}")


@click.command("history", cls=StoreCommand)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the operations (or, with --steps, the steps) as JSON."
)
@click.option(
    "--limit", type=int, default=None, help="Show only the last N operations (or steps, with --steps)."
)
@click.option("--steps", "by_step", is_flag=True, help="List every step, not one line per operation.")
@click.option(
    "--operation",
    "op_ref",
    default=None,
    help="List the steps of this one operation (its id or 4+ characters of it).",
)
def history_cmd(root: str, as_json: bool, limit: int | None, by_step: bool, op_ref: str | None) -> None:
    """List ROOT's history: one line per operation (an ingest, an add, a consolidate, an adopt, a
    revert, one tool call made outside any of them) with its steps and the files it changed;
    --steps lists every journaled step (step 0 the baseline), --operation ID one operation's steps."""
    from memdir.store.journal import Journal, find, group

    steps = Journal(_store(root, journaled=True).root).steps()
    if op_ref is not None:
        try:
            steps = find(group(steps), op_ref).steps if steps else []
        except MemdirError as exc:
            raise click.ClickException(str(exc)) from None
        by_step = True
    if not steps and not as_json:
        click.echo("no journal yet: steps are recorded from the first write through memdir's tools")
        return
    if by_step:
        _step_table(root, steps[-limit:] if limit is not None else steps, as_json)
        return
    ops = group(steps)
    if limit is not None:
        ops = ops[-limit:]
    if as_json:
        click.echo(json.dumps([o.as_dict() for o in ops], indent=2, ensure_ascii=False))
        return
    from rich.box import SIMPLE_HEAD
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"memdir history {root}: {len(ops)} operation(s), {len(steps)} step(s)", box=SIMPLE_HEAD
    )
    for col in ("operation", "kind", "time (UTC)", "steps", "files"):
        table.add_column(col, no_wrap=True)  # an id stays whole on its line
    table.add_column("label", overflow="fold")
    for o in ops:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(o.first.time))
        label = o.operation.label + (" [redacted]" if any(s.redacted for s in o.steps) else "")
        table.add_row(o.id, o.operation.kind, when, o.span(), str(len(o.paths())), label)
    # piped or logged, no terminal gives a width: a label folded to 12 columns reads as noise
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    click.echo(
        f"steps of one: memdir history {root} --operation ID; undo one: memdir revert {root} --operation ID"
    )


def _step_table(root: str, steps: list[JournalStep], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([s.as_dict() for s in steps], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"memdir history {root}")
    for col in ("step", "time (UTC)", "operation", "tool", "role", "chunk/task", "changes"):
        table.add_column(col)
    for s in steps:
        first = s.changes[0] if s.changes else None
        what = (
            ""
            if first is None
            else f"{first.kind} {first.path}" + (f" -> {first.new_path}" if first.new_path else "")
        )
        if len(s.changes) > 1:
            what += f" (+{len(s.changes) - 1} more)"
        who = "/".join(v for v in (s.meta.get("chunk"), s.meta.get("task")) if v)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s.time))
        tool = s.tool + (f" [redacted by {s.redacted}]" if s.redacted else "")
        table.add_row(str(s.index), when, s.operation.id, tool, s.meta.get("role", ""), who, what)
    Console().print(table)


@click.command("growth", cls=StoreCommand)
@click.option("--every", type=int, default=10, show_default=True, help="Compute B metrics every K steps.")
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to write growth.json and the PNGs (default: ROOT/.memdir/growth).",
)
def growth_cmd(root: str, every: int, out: str | None) -> None:
    """Replay ROOT's journal: per-step size and events, file fates, adherence; JSON and plots."""
    from rich.progress import Progress

    from memdir.analytics import growth, growth_plots
    from memdir.store.journal import Journal

    store = _store(root)
    with Progress(transient=True) as bar:
        task = bar.add_task("B metrics along the journal", total=None)

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        g = growth.replay(Journal(store.root), every=every, progress=tick)
    out_dir = Path(out) if out else store.root / ".memdir" / "growth"
    written = growth_plots.write(g, out_dir, title=store.root.name)
    last = g.steps[-1]
    counts = g.fate_counts()
    click.echo(
        f"{len(g.steps) - 1} steps: {last['files']} files, {last['sections']} sections, "
        f"{last['bytes']} bytes; "
        f"creations {last['cum_creations']}, edits {last['cum_edits']}, deletions {last['cum_deletions']}, "
        f"renames {last['cum_renames']}"
    )
    if g.fate_step is not None:
        click.echo(
            f"fate of the {len(g.fates)} files present after step {g.fate_step}: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
    for p in written:
        click.echo(f"wrote {p}")


@click.command("check", cls=StoreCommand)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--fanout-cap",
    type=int,
    default=spec.DEFAULT_FANOUT_CAP,
    show_default=True,
    help="Most entries a folder may hold.",
)
@click.option(
    "--core-budget",
    cls=Renamed,
    old=("--budget",),
    type=int,
    default=spec.DEFAULT_CORE_BUDGET,
    show_default=True,
    help="Core memory budget in tokens.",
)
def check_cmd(root: str, as_json: bool, fanout_cap: int, core_budget: int) -> None:
    """Check ROOT: spec, references, fanout, core budget, names, supersede integrity; exit 1 on failure."""
    from memdir.analytics.integrity import check

    report = check(_store(root), fanout_cap=fanout_cap, budget=core_budget)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        for p in report.problems:
            click.echo(f"FAIL [{p.rule}] {p.path}: {p.message}")
        for w in report.warnings:
            click.echo(f"warn [{w.rule}] {w.path}: {w.message}")
        c = report.counts
        click.echo(
            f"{'ok' if report.ok else 'failed'}: {len(report.problems)} problem(s), "
            f"{len(report.warnings)} warning(s); {c['files']} files, {c['keyed_facts']} keyed facts, "
            f"{c['live_keys']} live keys, core {c['core_tokens']} tokens"
        )
    sys.exit(0 if report.ok else 1)


@click.command("diff")
@click.argument("old", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--facts", "facts_mode", is_flag=True, help="Preservation check: every fact line of OLD must be in NEW."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def diff_cmd(old: str, new: str, facts_mode: bool, as_json: bool) -> None:
    """Compare two stores. With --facts: list fact lines of OLD missing from NEW (exit 1 if any)."""
    if not facts_mode:
        raise click.UsageError("say what to compare: 'memdir diff OLD NEW --facts'")
    from memdir.analytics.integrity import diff_facts

    d = diff_facts(_store(old), _store(new))
    if as_json:
        click.echo(json.dumps(d.as_json(), indent=2))
    else:
        for f in d.missing:
            click.echo(f"MISSING {f.path}:{f.lineno}: {f.text.strip()}")
        for u in d.unread:
            click.echo(f"UNREAD in OLD {u}")
        click.echo(
            f"{'ok' if d.ok else 'failed'}: {d.old_facts} fact lines in OLD, {len(d.missing)} missing, "
            f"{d.kept_in_place} in the same file, {d.moved} moved; {d.new_facts} fact lines in NEW"
        )
    sys.exit(0 if d.ok else 1)


def register(cli: click.Group) -> None:
    for cmd in (stats_cmd, history_cmd, growth_cmd, check_cmd, diff_cmd):
        cli.add_command(cmd)
