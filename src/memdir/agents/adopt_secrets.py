"""The secrets a folder of notes holds before `memdir adopt` makes it a memory (docs/secrets.md).

Adopting journals the notes as they are before its own step, so a secret in a note would enter
the journal however its landing wrote it. So adopt looks first: the secrets are listed (path,
line, kind; never the text) and the adoption refused, unless the person asks for them to be
redacted, which is done in place, before the journal exists or anything else is written, with
no copy kept anywhere: a secret in a note the person still needs is theirs to move out first.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir.agents.adopt_walk import entries
from memdir.errors import MemdirError
from memdir.store.secrets import scan
from memdir.store.store import Store


@dataclass(frozen=True)
class Held:
    """One secret a note holds: where (memory path, line) and what kind."""

    path: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.kind})"


def held(store: Store) -> list[Held]:
    """The secrets in the folder's markdown notes that the store's allowlist does not hold."""
    out: list[Held] = []
    for mp, is_dir in entries(store)[0]:
        if is_dir or not mp.name.endswith(".md"):
            continue
        try:
            text = store.read_text(mp)
        except MemdirError:
            continue  # not UTF-8 or gone: adopt's plan reports it
        for hit in scan(text):
            if not store.safe.allowed(text[hit.start : hit.end]):
                out.append(Held(mp.text, text.count("\n", 0, hit.start) + 1, hit.kind))
    return out


def redact_in_place(store: Store, found: list[Held]) -> int:
    """Each note of `found` rewritten with its secrets as `[redacted: kind]`, through the store's
    one writer (a bare store: nothing follows it, so no journal sees the note before); returns
    how many notes were rewritten."""
    paths = sorted({h.path for h in found})
    with store.step("adopt-redact"):
        for p in paths:
            store.write(p, store.read_text(p))  # the writer redacts (safefs.SafeRoot.write)
    return len(paths)
