"""`memdir ingest` and `memdir ask`: the management and search roles from the command line.

Every model call (or offline policy step) is appended to `<root>/.memdir/calls.jsonl`, next to
the store but hidden from every agent tool. Keys come from the environment only.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from datetime import timedelta
from pathlib import Path

import click

from memdir.agents.curation import CURATIONS, Curation
from memdir.agents.feedback import FEEDBACKS, Feedback, feedback_totals
from memdir.agents.ingest import NoOpWarning
from memdir.agents.ingest_batch import Ingested, IngestSettings, ingest_batch
from memdir.agents.read_search import SEARCHES, read_search, resolve_search
from memdir.agents.record import RunRecord
from memdir.agents.run import answer_question, choose_option
from memdir.agents.split import split_totals
from memdir.agents.strategy import STRATEGIES, SWITCH_KB, Strategy, StrategyResult
from memdir.chatlogs import ChatLog, parse_gap, read_chat
from memdir.cli.guard_opts import guard_options, require_reorganization
from memdir.cli.model_opts import call_record, model_from_options, model_options, usage_line
from memdir.cli.renamed import Renamed
from memdir.cli.root_opts import StoreCommand, memory_root
from memdir.errors import MemdirError
from memdir.models import Model, ModelError
from memdir.store import secrets
from memdir.store.ingest_ledger import DERIVED, Batch
from memdir.store.store import Store
from memdir.stream import RepairedTurnWarning
from memdir.tools.guards import Guards
from memdir.tools.wiring import open_store


def _gap(_ctx: click.Context, _param: click.Parameter, value: str | None) -> timedelta | None:
    """`--session-gap`'s value as a duration, refused in words (90s, 30m, 2h, 1d)."""
    try:
        return None if value is None else parse_gap(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(
    "ingest",
    cls=StoreCommand,
    root_exists=False,  # a typo is refused in words (memory_root), once FILE has been read
    root_help="The memory to integrate into (made with 'memdir init'), as ROOT or with --root.",
)
@click.argument("file", type=click.Path(exists=True))
@model_options
@click.option("--profile", default=None, help="Tool profile for the management role (default: manage).")
@guard_options
@click.option(
    "--session-gap",
    default=None,
    callback=_gap,
    help="For messages without a session field: start a new session after a pause this long "
    "(90s, 30m, 2h, 1d).",
)
@click.option("--sample", default=None, help="The conversation to read from a LoCoMo file of several.")
@click.option(
    "--feedback",
    type=click.Choice(FEEDBACKS),
    default="none",
    show_default=True,
    help="health: after each chunk's episode, send the agent the health findings it introduced, for "
    "one more round (the offline curator mends them itself); none: the study's protocol.",
)
@click.option(
    "--strategy",
    cls=Renamed,
    old=("--shape",),
    type=click.Choice(STRATEGIES),
    default="curate",
    show_default=True,
    help="curate: the management role integrates every chunk; dump: the verbatim dump (a file per "
    "session, no model call); auto: the dump while it stays within --switch-kb, then the dump's turns "
    "and the new ones are curated and the curated store replaces the dump.",
)
@click.option(
    "--switch-kb",
    type=click.FloatRange(min=0),
    default=None,
    help=f"For --strategy auto: the dump's size (KB of session files) past which the store switches to "
    f"curation [default: {SWITCH_KB:g}, derived from the cost curve, docs/eval.md].",
)
@click.option(
    "--curation",
    type=click.Choice(CURATIONS),
    default="auto",
    show_default=True,
    help="split: per chunk, one model call extracts facts as JSON (held to a schema), checked against "
    "the turns, then filed by rule (docs/curation.md); agentic: the study's tool-using management "
    "episode. auto: split for the local model, agentic for every other (the offline model curates by "
    "rule either way).",
)
def ingest_cmd(
    root: str, model_name: str, base_url: str | None, tool_protocol: str | None, api_key_env: str | None,
    script: str | None, profile: str | None, guards: Guards | None,
    session_gap: timedelta | None, sample: str | None, feedback: Feedback, strategy: Strategy,
    switch_kb: float | None, curation: Curation, file: str,
) -> None:  # fmt: skip
    """Integrate a conversation (FILE) into the store.

    FILE is memdir turns ({locator, speaker, text, date}), OpenAI-style messages ({role,
    content}) or speaker/text records ({speaker, text}, optional session and date), each as
    JSONL or a JSON list, a LoCoMo or REALTALK file, or a ChatGPT or Claude.ai export (its
    conversations.json, or the .zip as downloaded); the format is detected and said.
    Messages without locators get S<session>T<turn>; system and tool messages are left out and
    counted. The stream is cut into chunks of at most 8 turns, closed early at 3,000
    characters; the management role integrates them one by one. A turn may be at most 256 KiB;
    a lone surrogate in a turn's text (unstorable as UTF-8) becomes U+FFFD, with a warning
    naming the turn. Chunks whose episode changed nothing are counted and named (a warning);
    when no chunk changed anything the command exits with status 1, as it does, saying why and
    starting no operation, for a file that holds no turn.

    With --strategy dump or auto the turns may go to the verbatim dump instead (said with the turns
    and files written; a batch the dump already held exits with status 1); auto says where it
    switched to curation (docs/eval.md, "Ingest strategy").
    """
    if switch_kb is not None and strategy != "auto":
        raise click.BadParameter("applies to --strategy auto only", param_hint="--switch-kb")
    require_reorganization(guards, False, "an ingest adds facts, so it would refuse nothing")
    _not_notes(file, root)
    try:
        with warnings.catch_warnings(record=True) as repaired:
            warnings.simplefilter("always", RepairedTurnWarning)
            chat = read_chat(file, session_gap=session_gap, sample=sample)
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    for w in repaired:  # each names the turn, so nothing is changed unsaid
        click.echo(f"warning: {w.message}", err=True)
    memory_root(root)  # a typo makes no new store: refused, naming memdir init
    click.echo(f"{chat.summary()} from {file}")
    if not chat.turns:  # no operation to start, nothing to undo: a no-op, said as adopt's is
        why = chat.left_out() or "it holds no records"
        click.echo(f"nothing was ingested: {file} holds no turn ({why}); the store is unchanged", err=True)
        raise SystemExit(1)
    model = model_from_options(model_name, base_url, api_key_env, script, tool_protocol)
    store = open_store(root, guards=guards)
    settings = IngestSettings(
        curation=curation, feedback=feedback, strategy=strategy, switch_kb=switch_kb, profile=profile
    )
    waiting = f"waiting for the ingest already running into {root} to finish"
    shaped, op, record = _ingest(store, chat, file, model, settings, waiting)
    _strategy_lines(shaped, store)
    undo = f"operation {op}: undo it whole with 'memdir revert {root} --operation {op}'"
    result = shaped.ingest
    if result is None:  # a dump batch: no model call
        click.echo(usage_line(model))
        if shaped.wrote_nothing:
            click.echo("warning: every turn was already in the dump; nothing was written", err=True)
            raise SystemExit(1)
        click.echo(undo)
        return
    click.echo(f"{result.summary()} into {store.root}")
    if (split_line := split_totals(result.outputs)) is not None:
        click.echo(split_line)
    click.echo(usage_line(model))
    click.echo(f"call log: {record.path}")
    if feedback != "none":
        click.echo(feedback_totals(record.entries).line())
    if not result.changed_nothing:
        click.echo(undo)
    if result.unchanged:
        click.echo(
            f"warning: {len(result.unchanged)} of {len(result.chunks)} chunk(s) changed nothing in the "
            f"store; their episodes (replies and tool calls) are in {record.path}",
            err=True,
        )
    if result.changed_nothing:
        raise SystemExit(1)


def _ingest(
    store: Store, chat: ChatLog, file: str, model: Model, settings: IngestSettings, waiting: str
) -> tuple[StrategyResult, str, RunRecord]:
    """The one ingest (agents/ingest_batch.py), said as it goes: what placing left out, a
    progress bar over the chunks, and on a failure what landed and how to go on."""
    record = call_record(store, command="ingest")
    placed: list[Batch] = []

    def on_placed(batch: Batch) -> None:
        placed.append(batch)
        for line in batch.placed.lines(len(chat.turns)):
            click.echo(line)

    async def run() -> Ingested:
        from rich.progress import Progress

        bar = Progress(transient=True)  # shown once curation starts: a dump batch has no chunks
        task = bar.add_task("integrating", total=None)

        def start(n: int) -> None:
            bar.update(task, total=n, description=f"integrating {n} chunk(s)")
            bar.start()

        try:
            return await ingest_batch(
                model, store, chat.turns, derived=chat.format in DERIVED, ids=chat.ids, kind="ingest",
                file=file, settings=settings, record=record, on_wait=lambda: click.echo(waiting, err=True),
                on_placed=on_placed, on_curate=start, on_chunk=lambda _out: bar.advance(task),
            )  # fmt: skip
        finally:
            if bar.live.is_started:
                bar.stop()

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NoOpWarning)  # said below, in words and in the exit status
            done = asyncio.run(run())
    except (ModelError, MemdirError) as exc:
        if not placed:  # refused while placing: no call made, nothing landed
            raise click.ClickException(str(exc)) from None
        raise click.ClickException(
            f"{exc} (calls so far are in {record.path}){placed[0].resume_note()}"
        ) from None
    if done.redacted:
        click.echo(f"{secrets.said(done.redacted)} redacted: the store holds [redacted: KIND] in their place")
    if done.shaped is None or done.operation is None:
        click.echo("warning: every turn was already in the store; nothing was added", err=True)
        raise SystemExit(1)
    return done.shaped, done.operation, record


def _not_notes(file: str, root: str) -> None:
    """Notes are refused as a conversation with the command that takes them: `memdir adopt`."""
    if Path(file).is_dir():
        raise click.BadParameter(
            f"{file} is a folder; ingest reads one conversation file. To make a folder of markdown "
            f"notes a memory in place, run: memdir adopt {file}",
            param_hint="FILE",
        )
    if Path(file).suffix.lower() in (".md", ".markdown"):
        raise click.BadParameter(
            f"{file} is markdown notes, not a conversation. Notes are kept as they are: copy the file "
            f"into the memory ({root}) and run: memdir adopt {root} (it adds the frontmatter and "
            "indexes a memory needs, keeping every line)",
            param_hint="FILE",
        )


def _strategy_lines(shaped: StrategyResult, store: Store) -> None:
    """Where the batch went: said for every strategy but the plain curate path."""
    if shaped.went == "dump":
        click.echo(shaped.summary() + ("" if shaped.wrote_nothing else f", into {store.root}"))
    elif shaped.strategy != "curate" or shaped.went == "switch":
        click.echo(shaped.summary())
    if shaped.went == "switch" and shaped.switch is not None and shaped.switch.turns:
        click.echo(shaped.landing())


@click.command("ask", cls=StoreCommand)
@click.argument("question")
@model_options
@click.option("--profile", default=None, help="Read-only tool profile (default: search).")
@click.option(
    "--option", "options", multiple=True, help="A multiple-choice option (repeat); answer picks one."
)
@click.option(
    "--search",
    "search_kind",
    type=click.Choice(SEARCHES),
    default="auto",
    show_default=True,
    help="read: the top sections by search, then one constrained model call citing the lines it "
    "was shown; agentic: the study's tool-using search episode. auto: read for the local model, "
    "agentic for every other (the offline model's lexical searcher).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer, citations and cost as JSON.")
def ask_cmd(
    root: str, model_name: str, base_url: str | None, tool_protocol: str | None, api_key_env: str | None,
    script: str | None, profile: str | None, options: tuple[str, ...],
    search_kind: str, as_json: bool, question: str,
) -> None:  # fmt: skip
    """Answer QUESTION from the store (read-only) and print the answer with its citations.

    An answer given without opening any file is marked as such (it cannot come from the store).
    """
    store = open_store(root)
    model = model_from_options(model_name, base_url, api_key_env, script, tool_protocol)
    record = call_record(store, command="ask")
    try:
        how = resolve_search(search_kind, model, profile=profile)
        if options and search_kind == "read":
            raise MemdirError(
                "the read search answers open questions; drop --search read to choose an --option"
            )
        if how == "read" and not options:
            out = asyncio.run(read_search(model, store, question, record=record))
        elif options:
            out = asyncio.run(
                choose_option(model, store, question, list(options), record=record, profile=profile)
            )
        else:
            out = asyncio.run(answer_question(model, store, question, record=record, profile=profile))
    except (ModelError, MemdirError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(out.as_dict(), ensure_ascii=False, indent=2))
        return
    label = " (offline baseline)" if out.baseline else ""
    click.echo(f"answer{label}: {out.answer}")
    for c in out.citations:
        click.echo(f"  cite: {c}")
    if out.extra.get("files_opened") == 0:
        click.echo("warning: the answer was given without opening any file of the store", err=True)
    click.echo(usage_line(model), err=True)


def register(cli: click.Group) -> None:
    cli.add_command(ingest_cmd)
    cli.add_command(ask_cmd)
