"""Optimistic concurrency for the writing tools: `expected_sha256`, the hash of a file as its
caller last read it (view reports it), checked against the file's bytes on disk.

The check runs inside the tool's write step, under the store's writer lock (`Store.step`), so
no other tool call, in this process or another, can change the file between the check and the
write; a stale hash refuses the call before anything is written, and the file stays
byte-identical (docs/tools.md, Optimistic concurrency).

The parameter is an *extension*: every call may send it, and the schemas agent builders get
show it, but the tool infos memdir's own roles hand their models leave it out (a role is the
only writer of its store, and a small model would invent a hash and refuse its own writes).
"""

from __future__ import annotations

import hashlib
import re

from memdir.errors import PathError, ToolError
from memdir.jsontypes import JsonObject
from memdir.store.paths import MemoryPath
from memdir.tools.base import ToolContext
from memdir.tools.text import split_lines

PARAM = "expected_sha256"
PARAM_TEXT = (
    "Optional: the sha256 of the file as you last read it (view returns it). If the file has "
    "changed since, the call is refused and nothing is written; view it again and redo the edit."
)
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class StaleFileError(ToolError):
    """The file changed after the caller read it: its sha256 is not the one the caller sent."""


def sha256_hex(data: bytes) -> str:
    """The hash every tool reports and checks: sha256 of the file's exact bytes, lowercase hex."""
    return hashlib.sha256(data).hexdigest()


def parse_expected(tool: str, value: str | None) -> str | None:
    """The caller's hash in lowercase, or None when none was sent (an empty string counts as
    none, as null does); anything else that is not 64 hex digits is refused, never ignored."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not _HEX64.fullmatch(text):
        shown = ascii(text[:80]) + ("…" if len(text) > 80 else "")
        raise ToolError(
            f"{tool}: '{PARAM}' must be the 64 hex digits of a sha256, as view reports it; got {shown}. "
            "Nothing was written."
        )
    return text.lower()


def require_current(path: str, current: str, expected: str | None) -> None:
    """Refuse the call when the caller's hash is not the file's hash now; a no-op without one."""
    if expected is None or expected == current:
        return
    raise StaleFileError(
        f"{path} has changed since you read it: {PARAM} is {expected}, but the file's sha256 is now "
        f"{current}. Nothing was written; view {path} again and redo the edit on its current text."
    )


def refuse_for_folder(tool: str, path: str, expected: str | None) -> None:
    """A folder has no hash: a precondition on one is refused rather than silently dropped."""
    if expected is not None:
        raise ToolError(
            f"{path} is a folder, and only a file has a sha256; call {tool} on it without {PARAM}. "
            "Nothing was written."
        )


def read_checked(ctx: ToolContext, mp: MemoryPath, expected: str | None = None) -> tuple[str, str]:
    """The file's text and sha256; refused, before any write, when `expected` is stale. Writers
    call it inside their step, under the writer lock, so the hash is still true when they write."""
    data = ctx.store.read_bytes(mp)
    ctx.meter.bytes_read += len(data)
    ctx.touch(mp)
    digest = sha256_hex(data)
    require_current(mp.text, digest, expected)
    try:
        return data.decode("utf-8"), digest
    except UnicodeDecodeError:
        raise PathError(f"{mp.text} is not UTF-8 text") from None


def file_state(mp: MemoryPath, text: str, digest: str | None = None) -> JsonObject:
    """outputs.FILE_STATE of a file holding `text` (its bytes on disk are exactly its UTF-8)."""
    data = text.encode("utf-8")
    sha = sha256_hex(data) if digest is None else digest
    return {"path": mp.text, "sha256": sha, "lines": len(split_lines(text)), "bytes": len(data)}
