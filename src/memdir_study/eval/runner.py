"""The conversational study's runner: cells (benchmark x conversation x variant), each built
once and then searched with at most 8 questions in flight, judged, and written to a run folder.

Resumable: a cell's build is final once its marker (`cells/<benchmark>/<conversation>/<variant>.json`)
is written, and a question is done once its line is in `answers.jsonl`; a rerun with the same
settings builds and asks only what is missing. Everything the summary holds is derived from
those two (no wall times of searches), so a resumed run summarizes exactly like an
uninterrupted one. A cell whose model calls fail is aborted whole: its answers are withdrawn,
its marker says `aborted` with the reason, and a rerun starts it over. The folder's layout is
eval/folder.py; its tables, manifest and resume check are the kernel both studies share
(memdir_study/runfolder.py). Who runs the cells is a `CellExecutor`: `LocalExecutor`, one after
another on this event loop (the default), or eval/ray_executor.py, each a Ray task running the
same `Runner.run_cell`.
"""

from __future__ import annotations

import asyncio
import shutil
import string
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict, cast

from memdir.agents import RunRecord
from memdir.agents.output import RoleOutput
from memdir.agents.record import RecordLine, bounds, effort
from memdir.analytics.stats import store_stats
from memdir.conventions import BARE
from memdir.errors import MemdirError
from memdir.jsontypes import JsonObject, obj
from memdir.models import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelError,
    PriceCard,
    Usage,
    get_model,
)
from memdir.store.atomic import write_atomic
from memdir.store.store import Store
from memdir.tools.profiles import TOOL_SETS, profile_specs
from memdir.tools.wiring import open_store
from memdir_study.bench import load_sample
from memdir_study.bench.types import Question, Sample, parse_sessions
from memdir_study.eval.asking import way_to_ask
from memdir_study.eval.citations import resolve_all
from memdir_study.eval.folder import TIMINGS, CellMarker, RunFolder
from memdir_study.eval.judges import JUDGE_CONFIG, JudgeConfig, JudgeMessage, JudgeUsage, Verdict, judge_item
from memdir_study.eval.model_settings import (
    IN_FLIGHT,
    JUDGE_TEMPERATURE,
    STUDY_EFFORT,
    RoleSetting,
    check_efforts,
    manifest_roles,
    price_cards,
    with_effort,
)
from memdir_study.eval.progress import ProgressBars
from memdir_study.eval.records import (
    AnswerRow,
    CacheBounds,
    CorpusProfile,
    JudgeRecord,
    RunSummary,
    SearchEffort,
)
from memdir_study.eval.stores_from import StoreSource
from memdir_study.eval.summary import summarize_run, timings_of
from memdir_study.runfolder import read_manifest, require_same, write_manifest
from memdir_study.variants import (
    BuildChecks,
    BuildContext,
    BuildCost,
    Built,
    VariantUnavailable,
    build_cost,
    get_variant,
)

# Closed-book without a model: the honest floor is to know nothing.
IDENTITY = (
    "benchmark",
    "conversations",
    "variants",
    "builder_model",
    "search_model",
    "judge",
    "tool_set",
    "price_card",
    "sessions",
    "search",
    "stores_from",
)
# A run names its search outright (no `auto`): the study's agentic episode, or the read search.
EVAL_SEARCHES = ("agentic", "read")


@dataclass(kw_only=True)
class RunConfig:
    """A run's settings, named at every construction: eleven of them are strings or lists a
    position would swap silently (builder and search model, judge and tool set)."""

    benchmark: str
    conversations: list[str]
    variants: list[str]
    builder_model: str
    search_model: str
    judge: str = "offline"
    tool_set: str = "center"  # a TOOL_SETS name: the agent-curated builder's and search's profiles
    price_card: str = "gpt-5.4-mini"
    in_flight: int = IN_FLIGHT
    limit: int | None = None  # at most this many questions per cell (quick runs; resume continues)
    sessions: str | None = None  # "A-B": only these sessions of each sample (Sample.sliced)
    # How the search model answers an open question over a store: the study's agentic episode,
    # or memdir's read search (agents/read_search.py: top sections, one constrained call).
    search: str = "agentic"
    # Another run's folder whose stores this run searches instead of building (eval/stores_from.py)
    stores_from: str | None = None
    # Table 11's settings per role (eval/model_settings.py): reasoning effort over the study's
    # (builder and search high, judge low; None: none sent), and cards for roles priced apart
    # from `price_card`, which prices every role not named.
    reasoning_effort: dict[str, str | None] = field(default_factory=dict)
    role_cards: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reasoning_effort = check_efforts(self.reasoning_effort)
        price_cards(self.price_card, self.role_cards)  # an unknown card or role refused up front
        if self.stores_from is not None:
            self.stores_from = str(Path(self.stores_from).resolve())  # a resume or a Ray worker finds it
        if self.sessions is not None:
            first, last = parse_sessions(self.sessions)
            self.sessions = f"{first}-{last}"
        if self.search not in EVAL_SEARCHES:
            raise MemdirError(f"unknown search {self.search!r}; choose one of {', '.join(EVAL_SEARCHES)}")
        if self.search == "read" and self.search_model == "offline":
            raise MemdirError(
                "--search read makes one model call per question, and the offline model makes "
                "none; name a --search-model (e.g. local), or drop --search read"
            )

    def identity(self) -> JsonObject:
        """The settings a resumed run must share (the manifest's `config`)."""
        return {**self._identity(), **self._role_identity()}

    def _role_identity(self) -> dict[str, Any]:
        """The per-role settings, only where they are not the study's, so run folders made
        before they existed still resume."""
        out: dict[str, Any] = {}
        if self.reasoning_effort != STUDY_EFFORT:
            out["reasoning_effort"] = self.reasoning_effort
        if self.role_cards:
            out["role_cards"] = self.role_cards
        return out

    def _identity(self) -> dict[str, Any]:
        """The settings a resumed run must share. `sessions` and `stores_from` are left out while
        unset and `search` while it is the study's, so run folders made before any of them existed
        still resume."""
        return {
            k: getattr(self, k)
            for k in IDENTITY
            if (k not in ("sessions", "stores_from") or getattr(self, k) is not None)
            and (k != "search" or self.search != "agentic")
        }

    def apply_sessions(self, sample: Sample) -> Sample:
        """The sample as this run sees it: cut to `sessions` when set."""
        if self.sessions is None:
            return sample
        return sample.sliced(*parse_sessions(self.sessions))


class ModelReach(TypedDict):
    """How a model of the run is reached, as the manifest records it (never a key)."""

    tool_protocol: str | None
    base_url: str | None
    round_cap: NotRequired[int]


class CellAborted(MemdirError):
    pass


@dataclass(frozen=True)
class _Reply:
    text: str
    usage: JudgeUsage


class _JudgeModel:
    """The judges send plain dict messages; a Model takes ChatMessages."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def generate(self, messages: list[JudgeMessage], tools: list[Any], config: Any) -> Any:
        chat = [ChatMessage(m["role"], m["content"]) for m in messages]
        cfg = GenerateConfig(
            temperature=config.get("temperature"),
            reasoning_effort=config.get("reasoning_effort"),
            max_tokens=config.get("max_tokens"),
            answer_schema=config.get("verdict_schema"),
        )
        out = await self.model.generate(chat, [], cfg)
        return _Reply(out.message.content, JudgeUsage(**out.usage.as_dict(), model=self.model.name))


def answers(out: RoleOutput, options: tuple[str, ...]) -> tuple[str, str]:
    """The answer scored and the answer shown: for a multiple-choice question the chosen letter,
    and the letter with its option (an answer that chose none stands as it is)."""
    answer = out.answer or ""
    choice = out.extra.get("choice") if options else None
    if not isinstance(choice, int):
        return answer, answer
    letter = f"({string.ascii_lowercase[choice]})"
    return letter, f"{letter} {options[choice]}"


def search_metrics(entries: list[RecordLine], card: PriceCard | None) -> SearchEffort:
    """One question's search effort from its record lines (model episodes or offline steps), with
    `prompt_kb`, the size of the first round's prompt as sent (None when no model was asked)."""
    done = effort(entries)
    return SearchEffort(
        prompt_kb=prompt_kb(entries),
        tool_calls=done.tool_calls,
        rounds=done.rounds,
        bytes_read=done.bytes_read,
        input_tokens=done.usage.input_uncached,
        cached_tokens=done.usage.input_cached,
        output_tokens=done.usage.output,
        reasoning_tokens=done.usage.reasoning,
        cost_usd=round(card.cost(done.usage), 8) if card else 0.0,
        bounds=CacheBounds.model_validate(bounds(entries).as_dict()),  # the intrinsic bounds, for Table 18
    )


def prompt_kb(entries: list[RecordLine]) -> float | None:
    """KiB of the messages the first model call of a question's search was sent (the loop records
    them as `prompt_bytes` on round 1): what a prompt costs before the model reads anything."""
    for e in entries:
        if e.get("kind") == "model_call" and e.get("round") == 1 and "prompt_bytes" in e:
            return round(int(e["prompt_bytes"]) / 1024, 3)
    return None


def judge_metrics(verdicts: Sequence[Verdict], card: PriceCard | None = None) -> JudgeRecord:
    """One question's judge labels (unparsed ones visible in the answers), attribution's three
    scales when it was scored, and the judge's tokens and bill (priced with the judge's card)."""
    usage = Usage()
    for v in verdicts:
        usage += Usage.from_dict(v.usage or {})
    scales = [v.scales for v in verdicts if v.judge == "attribution" and v.scales]
    return JudgeRecord(
        labels={v.judge: v.label for v in verdicts},
        input_tokens=usage.prompt,
        output_tokens=usage.output,
        reasoning_tokens=usage.reasoning,
        cost_usd=round(card.cost(usage), 8) if card else 0.0,
        seconds=round(usage.seconds, 3),
        scales=scales[-1] if scales else None,
    )


@dataclass
class ConversationCell:
    """One variant of the conversational study on one conversation: its build and store."""

    benchmark: str
    conversation: str
    variant: str
    status: str = "pending"  # built | skipped | aborted
    reason: str | None = None
    build: BuildCost = field(default_factory=lambda: BuildCost())
    store: JsonObject | None = None
    checks: BuildChecks = field(default_factory=lambda: BuildChecks())
    search_profile: str | None = None
    corpus: CorpusProfile = field(default_factory=lambda: CorpusProfile())
    stores_from: dict[str, str] | None = None  # {run, cell} when the store is another run's

    @property
    def key(self) -> dict[str, str]:
        return {"benchmark": self.benchmark, "conversation": self.conversation, "variant": self.variant}

    def marker(self) -> CellMarker:
        """The cell as its build marker saves it (`CellMarker`: these fields, as JSON)."""
        return cast(CellMarker, asdict(self))


def corpus_profile(sample: Sample) -> CorpusProfile:
    return {
        "turns": len(sample.turns),
        "sessions": len(sample.session_turns()),
        "chunks": len(sample.chunks()),
        "kb": round(sum(len(t.text.encode()) for t in sample.turns) / 1024, 3),
        "questions": len(sample.questions),
    }


class Runner:
    def __init__(
        self,
        config: RunConfig,
        out: str | Path,
        *,
        progress: bool = True,
        models: dict[str, Model] | None = None,
        executor: CellExecutor | None = None,
    ) -> None:
        self.config = config
        # the source is checked before this run's folder is made (eval/stores_from.py)
        self.source = StoreSource.open(config.stores_from) if config.stores_from else None
        if self.source is not None:
            self.source.check(config)
        self.taken: dict[str, Any] = {}  # the manifest's `stores_from`, once the cells are known
        self.folder = RunFolder(Path(out))
        self.progress = progress
        self.models = models or {}
        self.executor: CellExecutor = executor or LocalExecutor()
        self.cards = price_cards(config.price_card, config.role_cards)  # each role's bill apart
        self.card = self.cards["search"]
        if config.tool_set not in TOOL_SETS:
            raise MemdirError(f"unknown tool set {config.tool_set!r}; choose one of {', '.join(TOOL_SETS)}")
        if config.tool_set == "shell":
            offline = [
                r
                for r, m in (("search", config.search_model), ("builder", config.builder_model))
                if m == "offline"
                and (r == "search" or any(get_variant(v).builds_with_tools for v in config.variants))
            ]
            if offline:
                raise MemdirError(
                    f"--tool-set shell needs a model for the {' and '.join(offline)} role: the offline "
                    "baseline policies work through the file tools (view, grep, create, ...), not bash"
                )
        for profile in TOOL_SETS[config.tool_set]:
            try:
                profile_specs(profile)
            except MemdirError as exc:
                raise MemdirError(f"--tool-set {config.tool_set} cannot run here: {exc}") from None

    def model(self, name: str) -> Model:
        if name not in self.models:
            self.models[name] = get_model(name)
        return self.models[name]

    def model_names(self) -> list[str]:
        """The models this run calls: not the builder when its stores are another run's."""
        names = {self.config.search_model, self.config.judge} - {"offline"}
        if self.source is None and self.config.builder_model != "offline":
            names.add(self.config.builder_model)
        return sorted(names)

    def played(self, role: str) -> Model:
        """The model playing an agent role, sent that role's reasoning effort."""
        name = self.config.builder_model if role == "builder" else self.config.search_model
        return with_effort(self.model(name), self.config.reasoning_effort[role])

    def judge_model(self) -> _JudgeModel | None:
        if self.config.judge == "offline":
            return None
        effort = self.config.reasoning_effort["judge"]
        return _JudgeModel(with_effort(self.model(self.config.judge), effort, JUDGE_TEMPERATURE))

    def role_settings(self) -> dict[str, RoleSetting]:
        """Each role's model, reasoning effort (asked, and whether sent), the judge's temperature
        and each role's price card (docs/study.md, Configuration of record (Table 11))."""
        c = self.config
        names = {"builder": c.builder_model, "search": c.search_model, "judge": c.judge}
        models = {n: self.model(n) for n in self.model_names()}  # a source's builder is never made
        source = self.source
        idle = {"builder": f"its stores are taken --stores-from {source.run}"} if source is not None else {}
        return manifest_roles(names, models, c.reasoning_effort, self.cards, idle)

    def model_settings(self) -> dict[str, ModelReach]:
        """How each model of the run is reached: its tool protocol and server (never a key)."""
        out: dict[str, ModelReach] = {}
        for name in self.model_names():
            api = self.model(name).api
            out[name] = {"tool_protocol": api.tool_protocol, "base_url": getattr(api, "base_url", None)}
            if api.round_cap is not None:
                out[name]["round_cap"] = api.round_cap
        return out

    def check_manifest(self) -> None:
        """A new run writes its manifest; a resumed one must have the stored settings."""
        mine = self.config.identity()
        old = read_manifest(self.folder.manifest)
        if old is not None:
            require_same(self.folder.out, obj(old.get("config")), mine)
            if self.source is not None and old.get("stores_from") != self.taken:
                raise MemdirError(
                    f"--stores-from {self.source.run} no longer holds the stores {self.folder.out} "
                    "started from (another build, or changed files); choose another --out"
                )
            return
        from memdir import __version__

        manifest = {
            "config": mine,
            "memdir": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "in_flight": self.config.in_flight,
            "models": self.model_settings(),
            "roles": self.role_settings(),
        }
        if self.source is not None:
            manifest["stores_from"] = self.taken
        write_manifest(self.folder.manifest, manifest)

    async def run(self) -> RunSummary:
        # every sample loaded (and sliced) first: a bad id or slice is refused before the manifest
        samples = [
            self.config.apply_sessions(load_sample(self.config.benchmark, c))
            for c in self.config.conversations
        ]
        if self.source is not None:  # every cell's store found before anything is written
            self.taken = self.source.require(
                [(s.benchmark, s.id, v) for s in samples for v in self.config.variants]
            )
        self.check_manifest()
        self.folder.repair()
        jobs = [(sample, variant) for sample in samples for variant in self.config.variants]
        with ProgressBars(self.progress) as bars:
            cells = await self.executor.run_cells(self, jobs, bars)
        rows = self.folder.answer_rows()
        summary = summarize_run(self.config, cells, rows)
        write_atomic(self.folder.out / "summary.json", summary.to_json())
        write_atomic(self.folder.out / TIMINGS, timings_of(cells, rows).to_json())
        return summary

    # -- build -------------------------------------------------------------------------------
    async def build_cell(
        self, sample: Sample, variant: str, bars: ProgressBars
    ) -> tuple[ConversationCell, Built | None]:
        cell = ConversationCell(sample.benchmark, sample.id, variant, corpus=corpus_profile(sample))
        marker = self.folder.marker(sample.benchmark, sample.id, variant)
        store_dir = self.folder.store_dir(sample.benchmark, sample.id, variant)
        saved = self.folder.read_marker(marker)
        if saved is not None:
            if saved["status"] in ("built", "skipped"):
                cell = ConversationCell(**saved)
                if cell.status == "skipped":
                    return cell, None
                store = open_store(store_dir) if store_dir.exists() else None
                return cell, Built(variant, store, cell.search_profile, cell.checks)
            self.folder.answers.withdraw(cell.key)  # aborted before: start over
        if store_dir.exists():
            shutil.rmtree(store_dir)  # a build cut short
        store_dir.parent.mkdir(parents=True, exist_ok=True)
        record = RunRecord(None, **cell.key)
        start = time.perf_counter()
        built: Built | None = None
        try:
            if self.source is not None and get_variant(variant).builds_store:  # another run's store: no build
                if not self.taken:  # a Ray worker's runner: the driver recorded it in the manifest
                    self.taken = dict(obj((read_manifest(self.folder.manifest) or {}).get("stores_from")))
                sha256 = self.taken["cells"][f"{sample.benchmark}/{sample.id}/{variant}"]["sha256"]
                built = self.source.take(cell, store_dir, sha256)
            else:
                ctx = self.build_context(sample, variant, store_dir, record, bars)
                built = await get_variant(variant).build(ctx)
            cell.status = "built"
        except VariantUnavailable as exc:
            cell.status, cell.reason = "skipped", str(exc)
        except (ModelError, MemdirError) as exc:
            cell.status, cell.reason = "aborted", f"build failed: {exc}"
        cell.build = build_cost(record.entries, self.cards["builder"], time.perf_counter() - start)
        self.folder.calls.append(record.entries)
        if built is not None:
            cell.checks = built.checks
            cell.search_profile = built.search_profile
            if built.store is not None:
                cell.store = {k: v for k, v in store_stats(built.store).as_json().items() if k != "details"}
        self.folder.save_marker(marker, cell.marker())
        return cell, built

    def build_context(
        self, sample: Sample, variant: str, store_dir: Path, record: RunRecord, bars: ProgressBars
    ) -> BuildContext:
        """What a variant's builder gets; the builder model is made only here, when one builds."""
        ctx = BuildContext(
            sample, store_dir, self.played("builder"), record, self.config.tool_set, self.cards["builder"]
        )
        ctx.progress = bars.units(f"{sample.id} {variant} (build)")
        return ctx

    # -- search ------------------------------------------------------------------------------
    async def run_cell(self, sample: Sample, variant: str, bars: ProgressBars) -> ConversationCell:
        cell, built = await self.build_cell(sample, variant, bars)
        if built is None:
            return cell
        done = {r.question_id for r in self.folder.answer_rows() if r.key == cell.key}
        todo = sorted(sample.questions, key=lambda q: q.order)
        if self.config.limit is not None:
            todo = todo[: self.config.limit]
        todo = [q for q in todo if q.id not in done]
        search_model = self.played("search")
        judge = self.judge_model()
        gate = asyncio.Semaphore(self.config.in_flight)
        tick = bars.task(f"{sample.id} {variant}", len(todo))

        async def one(q: Question) -> None:
            async with gate:
                record = RunRecord(None, **cell.key)
                try:
                    row = await self.ask(search_model, judge, built, cell, q, record)
                finally:
                    self.folder.calls.append(record.entries)  # a failure's error line too
                self.folder.add_answer(row)
                tick()

        tasks = [asyncio.create_task(one(q)) for q in todo]
        try:
            await asyncio.gather(*tasks)
        except (ModelError, MemdirError) as exc:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            cell.status, cell.reason = "aborted", f"search failed: {exc}"
            self.folder.answers.withdraw(cell.key)
            self.folder.save_marker(self.folder.marker(sample.benchmark, sample.id, variant), cell.marker())
        return cell

    async def ask(
        self,
        model: Model,
        judge: _JudgeModel | None,
        built: Built,
        cell: ConversationCell,
        q: Question,
        record: RunRecord,
    ) -> AnswerRow:
        """One question asked the one way the built store is asked (eval/asking.py), judged, scored."""
        store = built.store
        way = way_to_ask(built, self.config.search)
        options = list(q.options or ())
        out = await way(model, q.question, options, question_id=q.id, variant=cell.variant, record=record)
        scored_answer, out_answer = answers(out, tuple(options))
        citations = out.citations
        judging: JudgeConfig = {**JUDGE_CONFIG, "reasoning_effort": self.config.reasoning_effort["judge"]}
        scores = await judge_item(
            judge, store, q, scored_answer, citations, config=judging, attributed=out_answer
        )
        for verdict in scores.verdicts:
            record.write("judge", role="judge", question=q.id, **verdict.record())
        return AnswerRow(
            benchmark=cell.benchmark,
            conversation=cell.conversation,
            variant=cell.variant,
            question_id=q.id,
            order=q.order,
            category=q.category,
            question=q.question,
            gold=q.gold,
            answer=out_answer,
            citations=citations,
            correctness=scores.correctness,
            attribution=scores.attribution,
            f1=scores.offline_correctness,
            lexical_support=scores.lexical_support if store is not None else None,
            citations_not_found=scores.citations_not_found,
            evidence_hit=evidence_hit(store, citations, q) if store is not None and q.evidence else None,
            defective=q.defective,
            search=search_metrics(record.entries, self.card),
            judge=judge_metrics(scores.verdicts, self.cards["judge"]),
        )


class CellExecutor(Protocol):
    """Who runs a run's cells (the seam of docs/eval.md, "Running on Ray"). Given the runner,
    whose manifest is checked and whose folder is repaired, and the cells in the run's order,
    it returns each cell as `Runner.run_cell` left it, in that order; the summary is derived
    from the folder afterwards, so how the cells were spread cannot change it."""

    async def run_cells(
        self, runner: Runner, jobs: list[tuple[Sample, str]], bars: ProgressBars
    ) -> list[ConversationCell]: ...


class LocalExecutor:
    """One machine, one event loop: the cells one after another, each with `in_flight`
    questions at once (the default; eval/ray_executor.py spreads the cells over Ray)."""

    async def run_cells(
        self, runner: Runner, jobs: list[tuple[Sample, str]], bars: ProgressBars
    ) -> list[ConversationCell]:
        return [await runner.run_cell(sample, variant, bars) for sample, variant in jobs]


def evidence_hit(store: Store, citations: list[str], q: Question) -> float:
    """1.0 when a resolved citation's text carries a locator of the question's gold evidence."""
    gold = set(q.evidence)
    for r in resolve_all(store, citations):
        if r.text is not None and gold & set(BARE.findall(r.text)):
            return 1.0
    return 0.0


def run_eval(
    config: RunConfig,
    out: str | Path,
    *,
    progress: bool = True,
    models: dict[str, Model] | None = None,
    executor: CellExecutor | None = None,
) -> RunSummary:
    """Run (or resume) the study's cells into `out` (by `executor`, default the local one);
    returns summary.json's content, typed."""
    runner = Runner(config, out, progress=progress, models=models, executor=executor)
    return asyncio.run(runner.run())
