"""The one seam through which another package adds to memdir's outer layers: commands under
`memdir`, and pages of `memdir ui`.

A plugin is a module named in the `memdir.plugins` entry-point group (`[project.entry-points]`
of its pyproject.toml) that implements some of the hooks of :class:`Hooks` with `@hookimpl`.
pluggy checks each implementation's arguments against the hook when the plugin registers, so
a misspelt hook fails at load, not at the first call. Only `cli` and `ui` load plugins, and
only when asked (`memdir --help`, a command no topic module holds, `memdir ui` starting), so
`memdir check` reads no entry points.

A plugin that fails to import is left out and remembered with its reason (:func:`failures`):
the command it would have added says how to install it, and the UI starts without its pages.
This distribution's own plugin is the study (the `study` extra): `memdir study ...` and the
run pages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

import click
import pluggy

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

GROUP = "memdir.plugins"
hookspec = pluggy.HookspecMarker("memdir")
hookimpl = pluggy.HookimplMarker("memdir")
log = logging.getLogger(__name__)


@dataclass
class UIPages:
    """What plugins add to `memdir ui`: routes (GET and HEAD, behind the UI's own guards and
    sign-in) and the template folders their pages render from (after the UI's own, so a page
    may extend `base.html`)."""

    routes: list[tuple[str, Callable[[Request], Response]]] = field(default_factory=list)
    template_folders: list[tuple[str, str]] = field(default_factory=list)  # (package, folder)

    def page(self, path: str, view: Callable[[Request], Response]) -> None:
        self.routes.append((path, view))

    def templates(self, package: str, folder: str = "templates") -> None:
        self.template_folders.append((package, folder))


class Hooks:
    """The hooks a plugin may implement (each optional)."""

    @hookspec
    def register_commands(self, cli: click.Group) -> None:
        """Add commands or command groups to `memdir` (`cli.add_command(...)`)."""

    @hookspec
    def register_ui(self, pages: UIPages) -> None:
        """Add pages to `memdir ui` (`pages.page(path, view)`, `pages.templates(package)`)."""


@cache
def _loaded() -> tuple[pluggy.PluginManager, dict[str, str]]:
    manager = pluggy.PluginManager("memdir")
    manager.add_hookspecs(Hooks)
    failed: dict[str, str] = {}
    for point in entry_points(group=GROUP):
        try:
            manager.register(point.load(), name=point.name)
        except Exception as exc:  # a broken plugin must not take the product down with it
            failed[point.name] = f"{type(exc).__name__}: {exc}"
            log.warning("memdir plugin %r not loaded: %s", point.name, failed[point.name])
    return manager, failed


def manager() -> pluggy.PluginManager:
    """The plugin manager with every plugin of the entry-point group that imported."""
    return _loaded()[0]


def failures() -> dict[str, str]:
    """{entry-point name: why it failed to load} of the plugins left out."""
    return dict(_loaded()[1])


def register_commands(cli: click.Group) -> None:
    manager().hook.register_commands(cli=cli)


def ui_pages() -> UIPages:
    pages = UIPages()
    manager().hook.register_ui(pages=pages)
    return pages
