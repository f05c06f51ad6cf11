"""How every command names the store it works on: ROOT, its first argument, or `--root ROOT`.

The root is positional (`memdir ingest ROOT FILE`, `memdir serve ROOT`); `--root` stays accepted
as the same thing because MCP client configs already written start `memdir serve --root ...`.
Given both ways, the two must name one folder, or the command is refused before anything runs.
A command over a store is declared `@click.command(NAME, cls=StoreCommand)`: the class adds ROOT
and `--root` itself, so no command spells them twice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from memdir.store.frontmatter import MEMORY_INDEX
from memdir.store.sdk_layout import is_sdk_base, store_root

ROOT_OPTION = "root_option"  # the parser's name for --root's value; the command never sees it


def memory_root(root: str) -> Path:
    """`root` made absolute against the current folder (a client starts the server elsewhere),
    the store inside it for an Anthropic SDK helper's folder (`store/sdk_layout.py`); refused
    unless it is a memory, so a typo or a folder the agent should not write (a home folder) is
    never made into a store or served: the refusal names `memdir init`."""
    path = Path(os.path.abspath(Path(root).expanduser()))  # absolute, links kept, ".." folded
    if not path.is_dir():
        raise click.BadParameter(
            f"no folder at {path}; make a memory there with: memdir init {path}", param_hint="ROOT"
        )
    base, path = path, store_root(path)
    if path != base and not (path / MEMORY_INDEX).is_file():
        raise click.BadParameter(
            f"{base} is an Anthropic SDK memory helper's folder, not converted yet; convert it in place "
            f"with: memdir init {base} (or open it once with memdir.Memory), docs/serving.md",
            param_hint="ROOT",
        )
    if not (path / MEMORY_INDEX).is_file():
        raise click.BadParameter(
            f"{path} is not a memory (no {MEMORY_INDEX}); make it one with: memdir init {path}",
            param_hint="ROOT",
        )
    return path


def _a_memory(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        memory_root(value)
    return _sdk_store(_ctx, _param, value)


def _sdk_store(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """ROOT as given, or the store inside it when it is an SDK helper's folder."""
    if value is None or not is_sdk_base(value):
        return value
    return str(store_root(value))


def _same_folder(a: str, b: str) -> bool:
    return os.path.abspath(os.path.expanduser(a)) == os.path.abspath(os.path.expanduser(b))


class StoreCommand(click.Command):
    """A command over one store: ROOT first among its arguments, or `--root ROOT` anywhere.

    `root_exists`: the folder must exist; `root_memory`: it must be a memory (a root MEMORY.md),
    refused otherwise with the `memdir init` line (for commands that write into a store or hand
    it to a client, where a typo would make or serve a stray folder); `root_required`: False for
    a command with another way to be told what to serve; `root_default`: the folder meant when
    none is named."""

    def __init__(
        self,
        *args: Any,
        root_exists: bool = True,
        root_memory: bool = False,
        root_required: bool = True,
        root_default: str | None = None,
        root_help: str = "The memory root, as ROOT (its first argument) or with --root.",
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        kind = click.Path(file_okay=False, exists=root_exists and not root_memory)
        # a default of None passed to click counts as given: so none is passed unless there is one
        default = {} if root_default is None else {"default": root_default}
        self.params.insert(
            0,
            click.Argument(
                ["root"],
                type=kind,
                required=root_required and root_default is None,
                callback=_a_memory if root_memory else _sdk_store,
                **default,
            ),
        )
        self.params.append(
            click.Option(["--root", ROOT_OPTION], type=kind, expose_value=False, help=root_help)
        )

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self._root_first(ctx, args))

    def _root_first(self, ctx: click.Context, args: list[str]) -> list[str]:
        """`args` with `--root`'s value put first among the positionals, where ROOT belongs.

        Refused when ROOT is also given positionally and names another folder; given twice as
        the same folder, once is kept. Whether ROOT was also given is told by the count: more
        positionals than the command takes once `--root` has filled ROOT's place."""
        try:
            opts, extra, _ = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            return args  # the real parse below says what is wrong, in click's words
        given = opts.get(ROOT_OPTION)
        if not isinstance(given, str):
            return args
        arguments = [p for p in self.params if isinstance(p, click.Argument)]
        positional = [v for p in arguments for v in _tokens(opts.get(p.name or ""))] + list(extra)
        takes = None if any(p.nargs < 0 for p in arguments) else sum(p.nargs for p in arguments)
        if takes is not None and len(positional) > takes - 1:
            if _same_folder(positional[0], given):
                return args  # the same folder named twice: the positional one stands
            raise click.UsageError(
                f"the memory root is given twice, as ROOT {positional[0]!r} and as --root {given!r}; "
                "give it once (ROOT, the first argument)",
                ctx,
            )
        first = given if not given.startswith("-") else os.path.join(".", given)  # not read as an option
        return [first, *args]


def _tokens(value: object) -> list[str]:
    """The command-line words one argument took: a word, several, or none (not given)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, str)]
    return []
