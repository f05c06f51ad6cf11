"""The Anthropic memory tool (`memory_20250818`) served by a memdir store.

Swap the SDK's `BetaLocalFilesystemMemoryTool` for :class:`MemdirMemoryTool` and the same
`client.beta.messages.tool_runner(tools=[...])` app gets memdir's store: confined paths, atomic
writes, the journal and index, the operator's guards, and error texts the model can act on.

Claude writes plain text files; a memdir file opens with frontmatter (`name`, `description`).
The adapter bridges the two so the same calls have the same effect on the text Claude wrote:
- Line numbers count from the first line after the frontmatter. `view` shows the frontmatter
  as an unnumbered block above line 1; `view_range`, `insert_line` and the lines an "occurs N
  times" refusal names address the content lines, exactly as they would in a file without
  frontmatter (so `insert_line: 0` is the top of Claude's text, not the top of the file).
- As the SDK numbers them: a file ending in a newline shows the empty line after it (`text.
  split("\n")`), and every `insert` leaves the file ending in a newline.
- Every refusal is the SDK's `ToolError`, whichever command or layer refused, so the tool
  runner hands it to Claude as an error result (docs/serving.md lists what differs).
- Lenient mode (the default): `create` of a file without frontmatter gets one synthesized,
  `name` = the file stem and `description` = the text's first line with a word in it (heading
  marks removed, cut to 100 characters). A file that opens with a frontmatter block is checked
  as written. `insert` drops trailing newlines of `insert_text` as the SDK does.
- Lenient mode: a file name that is not a memory file name (`user_preferences.txt`, `notes`,
  `UserPrefs.md`) is mapped to the one it stands for (`user-preferences.md`), by the rule
  `validate` uses (`frontmatter.memory_name`, docs/conventions.md "File names"), in every
  command, so Claude's own name keeps reaching the file; the reply names the stored path. A
  path the store already holds under the name given (a folder, a file written outside the
  tools) is taken as it is. With `lenient=False` such a name is refused, with the name to use.
Always: paths are checked segment by segment, so `/memoriesX/a.md`, which the SDK's own helper
accepts, is refused, and the store holds only names `validate` accepts.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import anyio
from anthropic.lib.tools._beta_functions import BetaFunctionToolResultType
from anthropic.lib.tools._beta_functions import ToolError as AnthropicToolError
from anthropic.tools.memory import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memdir.errors import MemdirError
from memdir.store import frontmatter
from memdir.store.frontmatter import MEMORY_INDEX, is_memory_name, memory_name
from memdir.store.paths import parse_memory_path
from memdir.store.sdk_layout import store_root, unconverted
from memdir.store.secrets import said as said_secrets
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.text import split_lines
from memdir.tools.wiring import open_store

DESCRIPTION_CHARS = 100
C = TypeVar("C")


def synthesize_frontmatter(path: str, text: str) -> str:
    """`text` with a `name`/`description` frontmatter block in front, derived from path and text."""
    mp = parse_memory_path(path)
    first = next((ln for ln in text.split("\n") if re.search(r"\w", ln)), "")  # skip rules like ---
    desc = re.sub(r"^\s*(?:#+|[-*+>]|\d+[.)])\s*", "", first).strip()
    if len(desc) > DESCRIPTION_CHARS:
        desc = desc[: DESCRIPTION_CHARS - 3].rstrip() + "..."
    if not desc:
        desc = "Notes: " + mp.stem.replace("-", " ")
    return frontmatter.dump(mp.stem, desc) + text


class HarnessSource(Protocol):
    """What owns the harness the adapter calls through: a `memdir.Memory` (its `manage` harness)."""

    def harness(self, profile: str = ...) -> Harness: ...


def _harness(memory: Harness | HarnessSource | str | os.PathLike[str]) -> Harness:
    """The caller's harness, or, for a bare root, a `manage` harness over it as `Memory(root)`
    would open it (created, initialized, guards off; an SDK helper's folder at its memories/).
    An SDK helper's folder not converted yet is refused: its conversion is `Memory`'s, and the
    MEMORY.md made here would mark it done."""
    if isinstance(memory, Harness):
        return memory
    if isinstance(memory, str | os.PathLike):
        root = store_root(memory)
        if unconverted(root):
            raise MemdirError(
                f"{memory} is an Anthropic SDK memory helper's folder, not converted yet: open it "
                f"with memdir.Memory({str(memory)!r}).anthropic_memory_tool(), which converts it in "
                "place first (docs/serving.md)"
            )
        store = open_store(root, create=True, init=True, guards=Guards())
        return Harness(store, "manage", keep_indexes=True, role="api")
    return memory.harness("manage")


def _refusals(
    command: Callable[[MemdirMemoryTool, C], str],
) -> Callable[[MemdirMemoryTool, C], str]:
    """`command` with any memdir error (a path through a link, a file gone meanwhile) raised as
    the SDK's ToolError, the one exception its tool runner turns into an error result; the
    async adapter calls these same methods, so neither face leaks memdir's exceptions."""

    @functools.wraps(command)
    def refusing(self: MemdirMemoryTool, cmd: C) -> str:
        try:
            return command(self, cmd)
        except MemdirError as exc:
            raise AnthropicToolError(f"Error: {exc}") from None

    return refusing


class MemdirMemoryTool(BetaAbstractMemoryTool):
    """`memory_20250818` over a memdir store, for the Anthropic SDK's tool runner.

    Every command runs through one harness (a `Memory`'s, a `Harness` given directly, or one
    over a root given by path), so it is metered there with the caller's other calls; each call
    and step is marked `role="anthropic-memory"` (or the `meta` given) on top of its meta."""

    def __init__(
        self,
        memory: Harness | HarnessSource | str | os.PathLike[str],
        *,
        lenient: bool = True,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        **meta: Any,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.harness = _harness(memory)
        self.store = self.harness.store
        self.lenient = lenient
        self.meta = {"role": "anthropic-memory", **meta}

    # -- plumbing ------------------------------------------------------------------------
    def execute(self, command: BetaMemoryTool20250818Command) -> BetaFunctionToolResultType:
        """Dispatch as the SDK does; any memdir error reaches Claude as an error result."""
        try:
            return super().execute(command)
        except MemdirError as exc:
            raise AnthropicToolError(f"Error: {exc}") from None

    def _run(self, name: str, args: dict[str, Any], fm: int = 0) -> str:
        """The harness's reply to one call; a refusal raised as the SDK's ToolError, its line
        numbers (an "occurs N times" refusal's) shifted past `fm` frontmatter lines."""
        result = self.harness.call(name, args, **self.meta)
        if result.is_error:
            raise AnthropicToolError(_view_numbers(result.text, fm))
        return result.text

    def _path(self, path: str, *, new: bool = False) -> str:
        """The store path Claude's `path` names: itself when it is a memory file name (or the
        store holds it under that name, unless `new`); else, in lenient mode, the memory file
        name it maps to (`frontmatter.memory_name`); refused otherwise."""
        try:
            mp = parse_memory_path(path)
        except MemdirError as exc:
            raise AnthropicToolError(f"Error: {exc}") from None
        if mp.is_root or is_memory_name(mp.name) or (not new and self.store.exists(mp)):
            return mp.text
        name = memory_name(mp.name)
        if name is None:
            raise AnthropicToolError(
                f"Error: {mp.text} has no letter or digit (a-z, 0-9) to name a memory file by; memory "
                "files are kebab-case markdown: use a name like /memories/notes.md"
            )
        mapped = mp.parent.child(name).text
        if not self.lenient:
            raise AnthropicToolError(
                f"Error: memory files are markdown with kebab-case names; use {mapped} instead of {mp.text}"
            )
        return mapped

    def _fm_lines(self, path: str) -> int:
        """Lines the frontmatter occupies in `path` (0 for a folder, a missing file, or none)."""
        try:
            return frontmatter.split(self.store.read_text(path))[1]
        except MemdirError:
            return 0

    # -- the six commands ----------------------------------------------------------------
    @_refusals
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A folder as memdir lists it; a file numbered as the SDK numbers it (`text.split("\\n")`,
        so the empty line after a final newline has a number), below its frontmatter."""
        path = self._path(command.path)
        mp = parse_memory_path(path)
        if mp.is_root or not self.store.exists(mp) or self.store.is_dir(mp):
            if command.view_range:
                return self._run(
                    "view",
                    {"path": path, "start_line": command.view_range[0], "end_line": command.view_range[-1]},
                )
            return self._run("view", {"path": path})
        text = self.store.read_text(path)
        fm = frontmatter.split(text)[1]
        real = len(split_lines(text)) - fm  # the lines memdir's view numbers
        total = real + (text == "" or text.endswith("\n"))  # and the empty one the SDK adds
        first, last = 1, total
        if command.view_range:
            if len(command.view_range) != 2:
                raise AnthropicToolError(
                    "Error: view_range is [start_line, end_line], e.g. [1, 20] or [5, -1]"
                )
            first, end = command.view_range
            if first < 1 or first > total or (end != -1 and not first <= end <= total):
                raise AnthropicToolError(
                    f"Error: view_range {command.view_range} is out of range; {path} has {total} lines "
                    f"after its frontmatter: use [1, {total}], or -1 as the end"
                )
            last = total if end == -1 else end
            header = f"{path} (lines {first}-{last} of {total})"
        else:
            header = f"{path} ({total} lines" + (", below its frontmatter)" if fm else ")")
        if command.view_range and first <= real:
            args: dict[str, Any] = {"path": path, "start_line": first + fm, "end_line": min(last, real) + fm}
        else:
            args = {"path": path}
        out = self._run("view", args)
        body = _renumber(out.split("\n", 1)[1], fm) if "\n" in out else ""
        if first > real:  # only the SDK's empty last line was asked for
            body = ""
        if last > real:
            body += ("\n" if body else "") + f"{total:6d}\t"
        return header + "\n" + body

    @_refusals
    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = self._path(command.path, new=True)
        text = command.file_text
        name = parse_memory_path(path).name
        if self.lenient and name != MEMORY_INDEX and frontmatter.split(text)[1] == 0:
            text = synthesize_frontmatter(path, text)
        self._run("create", {"path": path, "file_text": text})
        notes = (
            [f"the memory file name for {command.path}, which reaches it too"] if path != command.path else []
        )
        if text != command.file_text:
            notes.append("frontmatter added: name and description")
        kept_out = [h.kind for h in self.store.redact(text)[1]]
        if kept_out:  # said, as the tools say it (docs/secrets.md)
            notes.append(f"{said_secrets(kept_out)} redacted: memory never stores secrets")
        return f"Created {path}" + (f" ({'; '.join(notes)})" if notes else "")

    @_refusals
    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = self._path(command.path)
        args = {"path": path, "old_str": command.old_str, "new_str": command.new_str}
        out = self._run("str_replace", args, self._fm_lines(path))
        head, _, snippet = out.partition("\n")
        where = "in the frontmatter" if "(frontmatter," in head else ""
        return f"Edited {path}{' ' + where if where else ''}:\n" + _renumber(snippet, self._fm_lines(path))

    @_refusals
    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        """Insert as the SDK does: the text less its trailing newlines as one block, and the
        file ending in a newline after it (the final newline a file without one gets lands in
        the insert's journal step)."""
        path = self._path(command.path)
        store = self.store
        fm = self._fm_lines(path)
        total = len(split_lines(store.read_text(path))) - fm
        line = command.insert_line
        if line < 0 or line > total:
            raise AnthropicToolError(
                f"Error: insert_line {line} is out of range; {path} has {total} lines, use 0-{total} "
                "(0 = the top, before line 1)"
            )
        args = {"path": path, "insert_line": line + fm, "insert_text": _one_block(command.insert_text)}
        with store.step("insert", **{**self.harness.meta, **self.meta}):
            # The newline goes first, so the insert is the call's last write: a refused insert
            # (a guard) takes the newline back, and the file is as it was.
            text = store.read_text(path)
            padded = text != "" and not text.endswith("\n")
            if padded:
                store.write(path, text + "\n")
            try:
                out = self._run("insert", args)
            except BaseException:
                if padded:
                    store.write(path, text)
                raise
        return f"Inserted after line {line} of {path}:\n" + _renumber(out.partition("\n")[2], fm)

    @_refusals
    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._run("delete", {"path": self._path(command.path)})

    @_refusals
    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        """Move; in lenient mode a file whose frontmatter name was its old stem takes the new stem
        in the same journal step, so the store stays valid (Claude does not know about `name`)."""
        store = self.store
        old_path = self._path(command.old_path)
        folder = store.exists(old_path) and store.is_dir(old_path)  # a folder's new name is a folder's
        new_path = command.new_path if folder else self._path(command.new_path, new=True)
        with store.step("rename", **{**self.harness.meta, **self.meta}):
            out = self._run("rename", {"old_path": old_path, "new_path": new_path})
            old, new = parse_memory_path(old_path), parse_memory_path(new_path)
            if self.lenient and store.exists(new) and not store.is_dir(new) and old.stem != new.stem:
                text = store.read_text(new)
                fm = frontmatter.split(text)[1]
                lines = text.split("\n")
                for i in range(1, max(fm - 1, 1)):
                    if re.fullmatch(rf"name:\s*['\"]?{re.escape(old.stem)}['\"]?\s*", lines[i]):
                        lines[i] = f"name: {new.stem}"
                        store.write(new, "\n".join(lines))
                        return f"Renamed {old.text} to {new.text} (its frontmatter name is now '{new.stem}')."
        return out


def _one_block(text: str) -> str:
    """The SDK inserts `text` minus its trailing newlines as one block (an empty line if nothing is left)."""
    return text.rstrip("\n") or "\n"


_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
_BODY_LINES = re.compile(r"(in the body of \S+, at lines )((?:\d+, )*\d+)")
_FM_LINES = re.compile(r"(in the frontmatter of \S+), at lines (?:\d+, )*\d+")


def _view_numbers(error: str, fm: int) -> str:
    """An "occurs N times" refusal with its whole-file line numbers put in view's numbering:
    body lines counted from the first line after the frontmatter, frontmatter lines named as
    the unnumbered block view shows above line 1."""
    if fm == 0:
        return error
    error = _BODY_LINES.sub(lambda m: m[1] + ", ".join(str(int(n) - fm) for n in m[2].split(", ")), error)
    return _FM_LINES.sub(r"\1 (the unnumbered block view shows above line 1)", error)


def _renumber(numbered_text: str, fm: int) -> str:
    """Shift `cat -n` numbers so line 1 is the first line after the frontmatter, which is shown unnumbered."""
    if fm == 0:
        return numbered_text
    out: list[str] = []
    for line in numbered_text.split("\n"):
        m = _NUMBERED.match(line)
        if m is None:
            out.append(line)
            continue
        n = int(m.group(1))
        out.append(f"      \t{m.group(2)}" if n <= fm else f"{n - fm:6d}\t{m.group(2)}")
    return "\n".join(out)


class MemdirAsyncMemoryTool(BetaAsyncAbstractMemoryTool):
    """The same, for `AsyncAnthropic`: each command runs in a worker thread (the store is sync)."""

    def __init__(self, memory: Harness | HarnessSource | str | os.PathLike[str], **kw: Any) -> None:
        cache_control = kw.pop("cache_control", None)
        super().__init__(cache_control=cache_control)
        self.sync = MemdirMemoryTool(memory, **kw)
        self._lock = anyio.Lock()

    async def _call(self, fn: Any, command: Any) -> str:
        async with self._lock:  # one command at a time: the harness meter is not thread-safe
            result: str = await anyio.to_thread.run_sync(fn, command)
        return result

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._call(self.sync.view, command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._call(self.sync.create, command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._call(self.sync.str_replace, command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._call(self.sync.insert, command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._call(self.sync.delete, command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._call(self.sync.rename, command)
