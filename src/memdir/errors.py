"""Two kinds of failure, kept apart on purpose.

A :class:`ToolError` is shown to the model: its text is an instruction the model can act on
("old_str occurs 3 times, at lines 4, 9, 12; include more context"). Anything else derived
from :class:`MemdirError` ends the operation for the caller (a person or a run), not the model.
"""

from __future__ import annotations


class MemdirError(Exception):
    """Base of every error memdir raises on purpose."""


class ToolError(MemdirError):
    """A failed tool call; the message is returned to the model as the tool result."""


class PathError(ToolError):
    """A memory path that is malformed, outside `/memories`, hidden, or leads out of the root."""


class NotFoundError(ToolError):
    """The path names nothing in the store."""


class ExistsError(ToolError):
    """The destination already exists."""


class EditError(ToolError):
    """An edit whose anchor or position does not fit the file."""


class FrontmatterError(ToolError):
    """Frontmatter that is missing or breaks the store's rules."""


class SandboxUnavailable(MemdirError):
    """No confining sandbox can be made here; the shell tool refuses rather than run unconfined."""


class NoOpWarning(UserWarning):
    """Work that changed nothing in the store (a management episode that wrote nothing, turns
    already ingested): warned, never silent, and never an error, since the store is as asked."""
