"""What `forget` removes: the request (a text, one line, a file, or a matcher), the one rule that
applies it to a file's text, and the redaction record that says what went without saying it.

One rule for every place the forgotten words are: the live files, each journal version of
them (`journal/redact.py`), and the derived files under `.memdir/` (`forget_derived.py`), so a
version of a file rewritten in the history is byte for byte what the live file became, and a
step that now changes nothing changes nothing. A matching line goes whole (a fact line is one
statement: half of it would say something else); a frontmatter line keeps its key with the
value `[redacted]`, so the file stays valid (docs/conventions.md). A file whose path holds the
text goes whole, as does the file `--file` names. A matcher (the secrets scanner, `--secrets`)
gives spans over a file's whole text, so a secret of several lines goes whole; those spans are
replaced, not the lines (docs/forget.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memdir.errors import MemdirError
from memdir.store import frontmatter
from memdir.store.digest_key import keyed_digest

REDACTED = "[redacted]"
MIN_CHARS = 4  # a shorter text would match too much to be what a person meant
Spans = Callable[[str], Iterable[tuple[int, int]]]  # a text -> (start, end) of each match in it
_KEY = re.compile(r"^(\s*[A-Za-z0-9_-]+:)")


@dataclass(frozen=True)
class Forget:
    """One request: exactly one of `text`, `line` (the line's own text: `line_at` reads it),
    `file` (a path relative to the root) or `matcher`; `reason` is kept in the record."""

    text: str | None = None
    line: str | None = None
    file: str | None = None
    matcher: Spans | None = None
    label: str = ""  # what the record names a matcher by (`secrets`)
    reason: str = ""
    # what a matcher matched so far (the words it stands for): the state folder is searched for
    # them and the ledger keeps their digests, as for a text
    matched: set[str] = field(default_factory=set, compare=False, repr=False)

    def __post_init__(self) -> None:
        given = [x for x in (self.text, self.line, self.file, self.matcher) if x is not None]
        if len(given) != 1:
            raise MemdirError("forget takes exactly one of: a text, --line PATH:N, --file PATH")
        for value in (self.text, self.line):
            if value is None:
                continue
            if "\n" in value or "\r" in value:
                raise MemdirError("forget one line of text at a time; run it again for the next line")
            if len(value.strip()) < MIN_CHARS:
                raise MemdirError(
                    f"{value!r} is shorter than {MIN_CHARS} characters and would match too much; "
                    "give more of the text"
                )

    @property
    def kind(self) -> str:
        if self.text is not None:
            return "text"
        if self.line is not None:
            return "line"
        return "file" if self.file is not None else "matcher"

    @property
    def words(self) -> str | None:
        """The forgotten words themselves, where the request has them (never recorded)."""
        return self.text if self.text is not None else self.line

    def digest(self, key: bytes) -> str:
        """The record's name for what is forgotten: its keyed digest under the store's `key`
        (`digest_key.py`: a plain hash of a short code is the code again)."""
        what = self.words if self.words is not None else (self.file or self.label)
        return keyed_digest(key, what.encode("utf-8", "surrogatepass"))

    def file_goes(self, rel: str) -> bool:
        """Does the file at `rel` (relative to the root) go whole?"""
        if self.file is not None:
            return rel == self.file
        return self.text is not None and self.text in rel

    def apply(self, text: str) -> tuple[str, int]:
        """`text` with every matching line removed (or redacted, in the frontmatter, or its spans
        replaced, for a matcher); and how many lines were touched."""
        if self.matcher is not None:
            return self._replace_spans(text)
        if self.words is None or self.words not in text:
            return text, 0  # most versions of most files: one search, no split
        lines = text.split("\n")
        _, fm_lines = frontmatter.split(text)
        out: list[str] = []
        touched = 0
        for i, line in enumerate(lines):
            new = self._line(line, fenced=0 < i < fm_lines - 1)
            if new == line:
                out.append(line)
                continue
            touched += 1
            if new is not None:
                out.append(new)
        return "\n".join(out), touched

    def _replace_spans(self, text: str) -> tuple[str, int]:
        """A matcher's spans over the whole text (a private key's block is several lines, one
        secret), each replaced by `[redacted]`; and how many lines they started on."""
        spans = sorted(self.matcher(text), reverse=True) if self.matcher is not None else []
        lines = {text.count("\n", 0, start) for start, _ in spans}
        for start, end in spans:
            self.matched.add(text[start:end])
            text = text[:start] + REDACTED + text[end:]
        return text, len(lines)

    def _line(self, line: str, *, fenced: bool) -> str | None:
        words = self.words
        assert words is not None
        hit = words in line if self.text is not None else line.rstrip("\r") == words.rstrip("\r")
        if not hit:
            return line
        if fenced:  # a frontmatter field keeps its key, so the file stays valid (quoted: YAML)
            key = _KEY.match(line)
            return f'{key.group(1)} "{REDACTED}"' if key and words not in key.group(1) else None
        return None

    def scrub(self, message: str) -> str:
        """A commit message with the forgotten words replaced (a label may quote them)."""
        if self.matcher is not None:
            return self._replace_spans(message)[0]
        words = self.words
        return message.replace(words, REDACTED) if words else message

    def bytes_forms(self) -> list[bytes]:
        """The words as bytes, as a file or a JSON line may hold them: what `forget_derived`
        looks for in the state folder's files."""
        forms: set[bytes] = set()
        for words in self.all_words():
            forms |= {words.encode("utf-8", "surrogatepass"), json.dumps(words)[1:-1].encode("ascii")}
        return sorted(forms)

    def all_words(self) -> list[str]:
        """The words the request names, or those its matcher has matched so far."""
        return [self.words] if self.words else sorted(w for w in self.matched if w)


def line_at(text: str, number: int, where: str) -> str:
    """Line `number` (from 1) of `text`, the whole line `--line` forgets; a blank line or a
    frontmatter fence is refused (it is no one's words)."""
    lines = text.split("\n")
    if not 1 <= number <= len(lines):
        raise MemdirError(f"{where} has {len(lines)} lines; give a line number from 1 to {len(lines)}")
    line = lines[number - 1]
    if not line.strip() or line.strip() == "---":
        raise MemdirError(
            f"line {number} of {where} is blank or a frontmatter fence; nothing of it to forget"
        )
    return line


@dataclass
class Record:
    """What a forget removed, kept in the journal (the `forget` step's trailers) and shown by
    `history`: when, why, a keyed digest of the words and how much went; never the words."""

    id: str
    kind: str
    digest: str
    reason: str
    time: int = field(default_factory=lambda: int(time.time()))
    lines: int = 0
    files: int = 0
    versions: int = 0  # journal steps rewritten

    def meta(self) -> dict[str, str | int]:
        """As step meta: each becomes a `Memdir-Meta-redaction-*` trailer."""
        return {
            "redaction": self.id,
            "redaction-kind": self.kind,
            "redaction-digest": self.digest,
            "redaction-reason": self.reason or "(none given)",
            "redaction-lines": self.lines,
            "redaction-files": self.files,
            "redaction-steps": self.versions,
        }


def new_record(request: Forget, key: bytes) -> Record:
    digest = request.digest(key)
    stamp = hashlib.sha256(f"{digest}{time.time_ns()}".encode()).hexdigest()[:12]
    return Record(stamp, request.kind, digest, request.reason)
