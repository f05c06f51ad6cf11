"""bash: a full shell over the memory, confined to it (the `shell` profile).

A command runs in the bubblewrap sandbox (:mod:`memdir.tools.sandbox`) on a private working
copy of the store (:mod:`memdir.store.workcopy`, brought up to date with the root first)
mounted read-write at /memories, while the tool's step holds the writer lock. Afterwards
whatever the command changed is carried back to the root and recorded in the step, so the
index and the journal catch up as they do after any file tool; .md files it left with broken
frontmatter are named in the result.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from memdir.errors import MemdirError, ToolError
from memdir.store import frontmatter
from memdir.store.workcopy import Outcome as CarryOutcome
from memdir.store.workcopy import WorkCopy
from memdir.tools import sandbox
from memdir.tools.base import ToolConfig, ToolContext, tool
from memdir.tools.folder_index_keeping import settle
from memdir.tools.sandbox import Outcome, ShellLimits

MAX_COMMAND_BYTES = 120_000  # Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN)
NARROW = (
    "narrow the command: pipe it through head -n 50 or tail -n 50, count with grep -c or wc -l, "
    "list names with grep -rl or ls, or print line ranges with sed -n '10,40p' FILE"
)


def limits_from(config: ToolConfig) -> ShellLimits:
    """The harness's `config["shell"]`: a ShellLimits, or a dict of its fields; defaults otherwise."""
    given = config.get("shell")
    if given is None:
        return ShellLimits()
    if isinstance(given, ShellLimits):
        return given
    if isinstance(given, dict):
        known = {f.name for f in fields(ShellLimits)}
        unknown = set(given) - known
        if unknown:
            raise MemdirError(f"unknown shell settings {sorted(unknown)}; known: {sorted(known)}")
        settings: dict[str, Any] = given  # JSON values; ShellLimits takes them as given before
        return replace(ShellLimits(), **settings)
    raise MemdirError(f"config['shell'] must be ShellLimits or a dict, not {type(given).__name__}")


@tool(
    description="""
    A full shell whose working directory is the memory root (relative paths or /memories/...
    paths both work), in an isolated sandbox: only the memory filesystem is visible, no host
    files, no network. It may create or modify files in the store. Output over 50,000
    characters is truncated.
    """,
    params={"command": "A bash command line or script, run with bash -c in /memories."},
    read_only=False,
    destructive=True,
    title="Run a command in the sandboxed shell",
)
def bash(ctx: ToolContext, command: str) -> str:
    limits = limits_from(ctx.config)
    if "\x00" in command:
        raise ToolError("the command contains a NUL byte; send plain text")
    if len(command.encode("utf-8")) > MAX_COMMAND_BYTES:
        raise ToolError(
            f"the command is longer than {MAX_COMMAND_BYTES:,} bytes (the system's limit for one "
            "argument); write large content in parts, e.g. several cat >> FILE <<'EOF' commands"
        )
    sandbox.require_sandbox()
    uid = sandbox.sandbox_owner(str(ctx.store.root))
    work = WorkCopy(ctx.store, owner=uid)
    try:
        outcome = sandbox.run(work.path, command, limits, uid)
        carried = work.carry_back(max_growth=limits.growth_mb * 2**20)
    except BaseException:
        work.reset()  # the next call rebuilds the copy from the root, the truth
        raise
    for path in carried.changed_md:
        ctx.touch(path)
    said = settle(ctx)  # with folder index keeping on: the folder indexes follow the command's writes
    text = _render(outcome, limits, carried, _frontmatter_problems(ctx, carried.changed_md))
    return text + (f"\n[indexes kept: {'; '.join(said)}]" if said else "")


def _frontmatter_problems(ctx: ToolContext, paths: list[str]) -> list[str]:
    problems: list[str] = []
    for path in paths:
        try:
            text = ctx.store.read_text(path)
        except MemdirError as exc:
            problems.append(f"{path}: {exc}")
            continue
        problems += [f"{path}: {p}" for p in frontmatter.validate(text, path.rsplit("/", 1)[-1])]
    return problems


def _render(out: Outcome, limits: ShellLimits, carried: CarryOutcome, problems: list[str]) -> str:
    parts = [out.stdout.rstrip("\n")] if out.stdout else []
    if out.stderr:
        parts.append("[stderr]\n" + out.stderr.rstrip("\n"))
    if out.truncated:
        parts.append(
            f"[output truncated: the command printed {out.total_bytes:,} bytes; only the first "
            f"{limits.output_chars:,} characters are shown. To see what you need, {NARROW}]"
        )
    if out.timed_out:
        parts.append(
            f"[killed after {limits.timeout:g} s, the time limit; changes made before that were kept. "
            "Split the work into shorter commands, or avoid commands that wait for input]"
        )
    else:
        parts.append(f"[exit status {out.exit_code}]")
    if carried.notes:
        parts.append("[notes]\n" + "\n".join(f"- {n}" for n in carried.notes))
    if problems:
        parts.append(
            "[frontmatter problems: each memory file must open with ---, name: <file stem>, "
            "description: <one line>, ---; fix these]\n" + "\n".join(f"- {p}" for p in problems)
        )
    return "\n".join(parts)
