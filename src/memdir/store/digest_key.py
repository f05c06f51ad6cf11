"""The store's digest key: what a forget keeps of the words it removed is their HMAC-SHA-256
under a random key of this store, never a plain hash (docs/forget.md).

A forget's record (the journal's `forget` step) and the ingest ledger name the forgotten words
by a digest, so a re-ingest can leave them out without holding them. A plain SHA-256 of a door
code, a PIN or a short address is the words again to anyone who tries the few values they can
be; keyed, the digest says nothing without the key, which stays in the state folder (never in
the journal, never synced). Created once, on the first forget, by a link that fails if another
process made it first, so two forgets at once agree on one key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

from memdir.store.atomic import fsync_dir
from memdir.store.paths import STATE_DIR

KEY_FILE = "digest-key"


def existing_key(root: Path) -> bytes | None:
    """The key of the store at `root`, or None before its first forget (a dry run makes none)."""
    try:
        return bytes.fromhex((root / STATE_DIR / KEY_FILE).read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return None


def store_key(root: Path) -> bytes:
    """The key of the store at `root`, made on first use (0600, 32 random bytes as hex)."""
    found = existing_key(root)
    if found is not None:
        return found
    path = root / STATE_DIR / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".memdir-tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another forget made it first: theirs holds
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    fsync_dir(path.parent)
    made = existing_key(root)
    if made is None:
        raise OSError(f"{path} vanished as it was made")
    return made


def keyed_digest(key: bytes, data: bytes) -> str:
    """HMAC-SHA-256 of `data` under `key`, as hex."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()
