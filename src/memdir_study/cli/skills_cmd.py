"""`memdir study skills`: ALFWorld task chains whose stores learn from their own trajectories."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from memdir.cli.model_opts import (
    endpoint_options,
    price_card_option,
    reasoning_effort_option,
    round_cap_option,
    tool_set_option,
)
from memdir.errors import MemdirError
from memdir_study.cli.executor_opts import check_executor, executor_options
from memdir_study.skills.chain import SKILL_ROLES
from memdir_study.skills.variants import VARIANT_NAMES

# The study's reasoning effort for every agent (Table 11); a model without the control gets none.
SKILL_EFFORT: dict[str, str | None] = dict.fromkeys(SKILL_ROLES, "high")


def _retriever(tool_set: str) -> Any:
    from memdir_study.skills.retrieve import retrieval

    return retrieval(tool_set).fn


def _roles(
    model: str, curator_model: str | None, tool_set: str, record: Any,
    base_url: str | None = None, tool_protocol: str | None = None, round_cap: int | None = None,
    search_model: str | None = None, efforts: dict[str, str | None] | None = None,
) -> tuple[Any, Any]:  # fmt: skip
    """(executor, Roles): an offline policy's name for a role means its no-model baseline. One
    name is one model: a role named like another shares its client (and its --round-cap)."""
    from memdir.models import ModelError, get_model
    from memdir.tools.profiles import TOOL_SETS
    from memdir_study.skills.chain import OFFLINE_POLICIES
    from memdir_study.skills.variants import Roles

    manage_profile, search_profile = TOOL_SETS[tool_set]
    built: dict[str, Any] = {}

    def build(name: str) -> Any:
        if name in OFFLINE_POLICIES:
            return None
        if name not in built:
            built[name] = get_model(name, base_url=base_url, tool_protocol=tool_protocol)
            built[name].api.round_cap = round_cap
        return built[name]

    try:
        executor = build(model)
        curator = build(curator_model or model)
        searcher = build(search_model or model)
    except ModelError as exc:
        raise MemdirError(str(exc)) from None
    for m in built.values():
        _ready(m)
    effort = {**SKILL_EFFORT, **(efforts or {})}

    def played(m: Any, role: str) -> Any:  # each role sent its own effort, counted on its model
        return None if m is None else m.with_settings(reasoning_effort=effort[role])

    roles = Roles(
        played(curator, "curator"), played(searcher, "search"), record, manage_profile, search_profile
    )
    return played(executor, "execution"), roles


def _ready(model: Any) -> None:
    """Fail before any game is loaded when a provider cannot be called (no key in the environment,
    the local model not installed)."""
    from memdir.models import ModelError

    try:
        model.api.check_ready()
    except ModelError as exc:
        raise MemdirError(f"--model/--search-model/--curator-model {model.name}: {exc}") from None


@click.command("skills")
@click.option(
    "--variants",
    "-v",
    required=True,
    help=f"Comma-separated: {', '.join(VARIANT_NAMES)}.",  # written from the skill registry
)
@click.option(
    "--model",
    "-m",
    default="offline",
    show_default=True,
    help="Execution model (and search model unless --search-model). No-model baselines: 'offline' "
    "(procedures built in, learns where things are) and 'offline-novice' (must learn the procedures "
    "from memory too).",
)
@click.option(
    "--search-model",
    default=None,
    help="Model of the search agent, apart from the executor (the paper runs gpt-4.1 and "
    "gpt-4.1-mini executors against a gpt-5.4-mini search agent): it chooses the entries served, or "
    "writes GS guidance (default: --model; 'offline' is the lexical retriever, a baseline).",
)
@click.option(
    "--show-admissible",
    is_flag=True,
    help="List the admissible actions in every observation the model executor reads (off by "
    "default, as in the paper; it changes the invalid-action rate the report gives).",
)
@click.option(
    "--curator-model",
    default=None,
    help="Model of the management agent that curates skills (default: --model; 'offline' is the "
    "mechanical distiller, a baseline).",
)
@price_card_option(SKILL_ROLES, "gpt-5.4-mini")
@reasoning_effort_option(SKILL_ROLES, SKILL_ROLES, "high for every agent")
@click.option(
    "--protocol",
    type=click.Choice(["full", "three"]),
    default="full",
    show_default=True,
    help="One full chain of 140, or three chains with stores reset between them.",
)
@click.option(
    "--tasks",
    "n_tasks",
    type=click.IntRange(min=1),
    default=None,
    help="Run only the first N tasks of each chain.",
)
@tool_set_option(
    "The profiles the roles use: center (manage / search, retrieval by grep), center-bm25 (BM25) "
    "or shell (bash in the sandbox)."
)
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Run folder to write.",
)
@endpoint_options
@round_cap_option
@executor_options
def skills_cmd(
    variants: str,
    model: str,
    search_model: str | None,
    show_admissible: bool,
    curator_model: str | None,
    protocol: str,
    n_tasks: int | None,
    tool_set: str,
    out: Path,
    price_card: tuple[str, dict[str, str]],
    reasoning_effort: dict[str, str | None],
    base_url: str | None,
    tool_protocol: str | None,
    round_cap: int | None,
    executor: str,
    address: str | None,
    cells_at_once: int | None,
) -> None:
    """Run task chains for each variant and write a run folder with summary, report and plots.

    `--model` plays the tasks; `--search-model` (default: `--model`), as the search agent, chooses
    the entries served (or writes GS guidance); `--curator-model` curates the skill stores.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memdir.agents.record import RunRecord
    from memdir.models import price_card as find_card
    from memdir.models import role_cards
    from memdir_study.bench.alfworld import chains, load_games
    from memdir_study.skills.chain import run_chains
    from memdir_study.skills.folder import TaskRow
    from memdir_study.skills.report import write_report

    names = [v.strip() for v in variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANT_NAMES]
    if unknown:
        raise MemdirError(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANT_NAMES)}")
    runner = None
    if check_executor(executor, address, cells_at_once):
        from memdir_study.skills.ray_executor import RayChainRunner

        runner = RayChainRunner(address, cells_at_once=cells_at_once)
    try:
        cards = role_cards(*price_card, SKILL_ROLES)  # the search, execution and curation bills apart
    except ValueError as exc:
        raise MemdirError(f"--price-card: {exc}") from None
    card = find_card(price_card[0])  # every role not priced apart (checked just above)
    retriever = _retriever(tool_set)
    player, roles = _roles(
        model,
        curator_model,
        tool_set,
        None,
        base_url,
        tool_protocol,
        round_cap,
        search_model,
        reasoning_effort,
    )
    if runner is not None:
        from memdir_study.cluster import model_specs, require_ray

        require_ray()  # no extra, or a model no worker can build: refused before any write
        model_specs({m.name: m for m in (player, roles.curator, roles.searcher) if m is not None})
    roles.record = RunRecord(out / "record.jsonl")  # after the checks: a refused run writes nothing
    total = sum(len(c) for c in chains(load_games(), protocol, n_tasks))
    solved: dict[str, int] = dict.fromkeys(names, 0)
    start = time.perf_counter()
    with Progress(
        TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        bars = {v: progress.add_task(v, total=total) for v in names}

        def on_task(row: TaskRow) -> None:
            v = row["variant"]
            solved[v] += bool(row["success"])
            progress.update(bars[v], advance=1, description=f"{v} ({solved[v]} solved)")

        run_chains(
            out, names, model=player or model, roles=roles, price_card=card, protocol=protocol,
            n_tasks=n_tasks, retriever=retriever, on_task=on_task, runner=runner,
            show_admissible=show_admissible, role_cards={r: cards[r] for r in price_card[1]},
        )  # fmt: skip
    from memdir_study.skills.folder import ChainFolder
    from memdir_study.skills.report import load_aborted

    # Every cell aborted at its first task leaves no row to report: say why, not that the folder has none.
    played = ChainFolder(out).tasks.path.is_file()
    cells = write_report(out) if played else []
    failed = [a for a in load_aborted(out) if a["variant"] in names and a["model"] == model]
    click.echo(f"{total} tasks x {len(names)} variants in {time.perf_counter() - start:.0f} s")
    for c in cells:
        click.echo(f"  {c['variant']:<22} success {100 * c['success']:.1f}%  mean steps {c['mean_steps']}")
    if played:
        click.echo(f"report: {out / 'report.md'}")
    if failed:
        raise MemdirError(
            "aborted (model calls failed; these cells are not reported): "
            + "; ".join(
                f"{a['variant']} at chain {a['chain']} task {a['index']}: {a['error']}" for a in failed
            )
        )


def register(cli: click.Group) -> None:
    cli.add_command(skills_cmd)
