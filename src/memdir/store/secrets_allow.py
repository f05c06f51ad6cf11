"""A store's secret allowlist: strings that look like secrets but may be written as they are
(a documented example key, a test card number the notes are about), docs/secrets.md.

Kept in `<root>/.memdir/secrets-allow` as keyed digests, not the strings: the first line is the
store's random key, each other line the HMAC-SHA-256 of an allowed string under it (then an
optional note), so the file names nothing a reader could use, and the same string allowed in two
stores has two unrelated digests. Read again only when the file changes (one stat per write).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path

from memdir.errors import MemdirError
from memdir.store.paths import STATE_DIR

ALLOW_FILE = "secrets-allow"
_HEADER = "key "
_cache: dict[Path, tuple[tuple[int, int], bytes, frozenset[str]]] = {}
_lock = threading.Lock()


def path(root: Path) -> Path:
    return root / STATE_DIR / ALLOW_FILE


def _digest(key: bytes, value: str) -> str:
    return hmac.new(key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def _load(file: Path) -> tuple[bytes, frozenset[str]] | None:
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _cache.get(file)
        if hit is not None and hit[0] == stamp:
            return hit[1], hit[2]
    lines = file.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith(_HEADER):
        raise MemdirError(
            f"{file} is not a secret allowlist (its first line should be 'key <hex>'); "
            "move it aside and add the allowed strings again with 'memdir secrets allow'"
        )
    key = bytes.fromhex(lines[0][len(_HEADER) :].strip())
    digests = frozenset(ln.split()[0] for ln in lines[1:] if ln.strip() and not ln.startswith("#"))
    with _lock:
        _cache[file] = (stamp, key, digests)
    return key, digests


def allowed_in(root: Path) -> Allowed:
    """The allowlist of the store at `root`, as a predicate over a found secret's text."""
    return Allowed(path(root))


class Allowed:
    """`allowed(text)`: whether the store's allowlist holds `text` (False when it has none).
    Asked only when a secret is found, so the file is looked at (one stat) only then."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def __call__(self, value: str) -> bool:
        loaded = _load(self.file)
        if loaded is None or not loaded[1]:
            return False
        key, digests = loaded
        return _digest(key, value) in digests


def allow(root: Path, value: str, note: str = "") -> str:
    """Add `value` to the allowlist of the store at `root`; returns its digest (its name there).
    Refuses an empty or multi-line value: an allowed string is one secret as it is written."""
    if not value.strip() or "\n" in value:
        raise MemdirError("give the one secret to allow, exactly as it is written, on one line")
    file = path(root)
    loaded = _load(file)
    if loaded is None:
        key = secrets.token_bytes(32)
        lines = [_HEADER + key.hex()]
    else:
        key = loaded[0]
        lines = file.read_text(encoding="utf-8").splitlines()
    digest = _digest(key, value)
    if not any(ln.split()[:1] == [digest] for ln in lines[1:]):
        clean = " ".join(note.split())
        lines.append(f"{digest} {clean}".rstrip())
    file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Written whole and swapped in (the store's atomic writer imports safefs, which reads this).
    tmp = file.with_name(f".{ALLOW_FILE}-{secrets.token_hex(6)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, file)
    return digest
