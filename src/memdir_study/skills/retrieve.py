"""Retrieval for the offline executor: whole entries ranked lexically against the task text.

Each retriever goes through the read-only harness of one study setting, like a search agent
would, so every read is metered by that harness. `center` ranks with `grep`: one alternation
pattern of the task's content words, each file scored by the inverse document frequency of the
words it contains. `center-bm25` ranks with `bm25_full_search`, `center-hybrid` with
`section_search` (sections by BM25 and embeddings, docs/retrieval.md). `shell` runs the same ranking
as `center` through the sandboxed `bash` tool (one `grep -rwoiE` over the store) and reads the
chosen files with `cat`. :data:`RETRIEVALS` maps each tool set's name to its profile and retriever.
"""

from __future__ import annotations

import math
import re
import secrets
import shlex
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from memdir import conventions
from memdir.errors import MemdirError
from memdir.store import frontmatter
from memdir.tools.profiles import TOOL_SETS, Harness

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "some",
        "two",
        "in",
        "on",
        "at",
        "with",
        "under",
        "and",
        "it",
        "them",
        "put",
        "find",
        "look",
        "examine",
        "of",
        "to",
    ]
)
PAGE_OVERHEAD = 120  # the shell paging's counts line and marker, with room to spare
BM25_MAX_TOP_K = 50  # bm25_full_search answers at most this many files
_HIT = re.compile(r"^(/memories/.+?\.md):(\d+): ", re.MULTILINE)
_BM25_HIT = re.compile(r"^\d+\. (/memories/.+?\.md) \(score (-?[0-9.]+(?:e[-+]?\d+)?)\)", re.MULTILINE)
# a `section_search` result: its path, and its BM25 rank when keywords found it
_SECTION_HIT = re.compile(r"^\d+\. (/memories/\S+?\.md) lines? .*\(score [0-9.]+; (?:.*?(bm25) #\d+)?", re.M)
_NUMBERED = re.compile(r"^ *\d+\t", re.MULTILINE)


@dataclass(frozen=True)
class Doc:
    path: str
    text: str

    @property
    def metadata(self) -> frontmatter.Metadata:
        return frontmatter.parse(self.text).metadata


def terms(task: str) -> list[str]:
    words = re.findall(r"[a-z]+", task.lower())
    return sorted({w for w in words if w not in STOP and len(w) > 1})


def read_whole(harness: Harness, path: str) -> str:
    """A file's text as the model would get it from `view`, line numbers removed."""
    text = harness.call_or_raise("view", {"path": path})
    return _NUMBERED.sub("", text.split("\n", 1)[1] if "\n" in text else "")


def grep_retrieve(harness: Harness, task: str, k: int) -> list[Doc]:
    """Top-k whole files for the task text; folder indexes (MEMORY.md) are not entries.

    The `grep` tool shows at most 400 characters of a line, so a word further along a longer
    line is not seen here (the shell's grep sees it); skill-setting entries have short lines.
    """
    words = terms(task)
    if not words:
        return []
    res = harness.call("grep", {"pattern": r"\b(" + "|".join(words) + r")\b", "max_results": 100_000})
    if res.is_error or res.text.startswith("No lines match"):
        return []
    found: dict[str, set[str]] = defaultdict(set)
    body = res.text.split("\n", 1)[1] if "\n" in res.text else ""
    for line in conventions.lines(body):  # `\n` only: a U+2028 inside a hit is no new hit
        m = _HIT.match(line)
        if not m or _is_index(m.group(1)):
            continue
        text = line[m.end() :].lower()
        found[m.group(1)] |= {w for w in words if re.search(rf"\b{w}\b", text)}
    return [Doc(p, read_whole(harness, p)) for p in rank(found, k)]


def rank(found: dict[str, set[str]], k: int) -> list[str]:
    """The k best paths of {path: task words it contains}, each word weighted by its IDF.

    Document frequencies count only the files that hold some task word: the ranking needs no
    count of the whole store, which neither grep output gives.
    """
    found = {p: ws for p, ws in found.items() if ws}
    if not found or k < 1:
        return []
    df: dict[str, int] = defaultdict(int)
    for ws in found.values():
        for w in ws:
            df[w] += 1
    n = len(found)
    # summed in word order: files with the same words tie exactly, whatever the set order
    score = {p: sum(math.log(1 + n / df[w]) for w in sorted(ws)) for p, ws in found.items()}
    return sorted(score, key=lambda p: (-score[p], [-ord(c) for c in p]))[:k]  # ties: later files first


def bm25_retrieve(harness: Harness, task: str, k: int) -> list[Doc]:
    """Top-k whole files by `bm25_full_search` over the task's content words.

    The tool ranks whole files (one hit per file: its index holds a document per file, not
    per section), so a file's score is the tool's own; a path listed twice would keep its best
    score, which never happens today. Folder indexes are skipped, and when they took places in
    the answer the search is asked again for more, up to the tool's cap of 50 files.
    """
    words = terms(task)
    if not words or k < 1:
        return []
    asked = min(k, BM25_MAX_TOP_K)
    while True:
        res = harness.call("bm25_full_search", {"query": " ".join(words), "top_k": asked})
        if res.is_error:
            raise MemdirError(f"bm25_full_search failed: {res.text}")
        hits = [(m.group(1), float(m.group(2))) for m in _BM25_HIT.finditer(res.text)]
        best: dict[str, float] = {}
        for path, score in hits:
            if not _is_index(path):
                best[path] = max(score, best.get(path, score))
        if len(best) >= k or len(hits) < asked or asked >= BM25_MAX_TOP_K:
            break
        asked = min(BM25_MAX_TOP_K, asked + k - len(best))
    chosen = sorted(best, key=lambda p: -best[p])[:k]  # stable: the tool's order among equal scores
    return [Doc(p, read_whole(harness, p)) for p in chosen]


def hybrid_retrieve(harness: Harness, task: str, k: int) -> list[Doc]:
    """Top-k whole files by the `section_search` tool (sections by BM25 and embeddings fused), each file
    at its best section's rank, for the task's content words (as `bm25_retrieve` asks). Only
    sections that share a word with the task count (the tool marks them `bm25 #n`): the
    dense ranking alone ranks every entry for any task, and the skill setting serves an entry
    only when it applies; meaning decides the order among them. Folder indexes are skipped, as
    in `bm25_retrieve`."""
    words = terms(task)
    if not words or k < 1:
        return []
    res = harness.call("section_search", {"query": " ".join(words), "top_k": BM25_MAX_TOP_K})
    if res.is_error:
        raise MemdirError(f"section_search failed: {res.text}")
    hits = [m[0] for m in _SECTION_HIT.findall(res.text) if m[1]]
    chosen = [p for p in dict.fromkeys(hits) if not _is_index(p)][:k]
    return [Doc(p, read_whole(harness, p)) for p in chosen]


def shell_retrieve(harness: Harness, task: str, k: int) -> list[Doc]:
    """`grep_retrieve`'s ranking done with the `bash` tool: one grep, then one cat of the top k.

    `grep -rIwoiE` prints each matched word with its file (binary files skipped, as rg skips
    them); `sort -u` and a bash loop fold that into one line per file (`path<TAB> w1 w2 ...`).
    Hidden folders and files (`.memdir`, though the sandbox's copy leaves it out anyway) and
    folder indexes are excluded by grep itself.
    Both outputs are read in pages that fit the tool's output limit (:func:`_paged`).
    """
    words = terms(task)
    if not words or k < 1:
        return []
    command = (
        "set -o pipefail; grep -rIwoiE --include='*.md' --exclude='.*' --exclude=MEMORY.md "
        f"--exclude-dir='.[!.]*' -e '({'|'.join(words)})' /memories | sort -u | "
        "{ prev=; while IFS= read -r l; do p=${l%:*}; w=${l##*:}; "
        'if [[ $p != "$prev" ]]; then [[ -n $prev ]] && echo; printf \'%s\t\' "$p"; prev=$p; fi; '
        "printf ' %s' \"${w,,}\"; done; [[ -n $prev ]] && echo; true; }"
    )
    found: dict[str, set[str]] = defaultdict(set)
    for line in _paged(harness, command, ok=(0, 1)):  # grep: 1 is 'no match', 2 an error
        path, tab, got = line.partition("\t")
        if tab and not _is_index(path):
            found[path] |= set(got.split()) & set(words)
    return _cat(harness, rank(found, k))


def _paged(harness: Harness, command: str, ok: tuple[int, ...] = (0,)) -> list[str]:
    """The lines `command` prints, read in pages that fit the shell tool's output limit.

    Each call runs `command` (a subshell) into the sandbox's private /tmp and prints the line count, the
    page's byte count and one page (`tail -n +START | head -c PAGE`) before a marker line, so
    the page's text is exact (the tool strips trailing newlines from output). A page cut by
    `head` loses its last, partial line, which the next page starts with. A status outside `ok`
    or a truncated answer is an error: never a partial ranking.
    """
    from memdir.tools.shell import limits_from

    shown = limits_from(harness.config).output_chars
    page = shown - PAGE_OVERHEAD  # bytes of output per call, beside the counts and the marker
    if page < 1:
        raise MemdirError(f"the shell shows {shown} characters a call, too few to page through output")
    mark = f"@@memdir-{secrets.token_hex(8)}"
    lines: list[str] = []
    while True:
        res = harness.call(
            "bash",
            {
                "command": f"( {command}\n) > /tmp/out; s=$?; n=$(grep -c '' /tmp/out); "
                f"tail -n +{len(lines) + 1} /tmp/out | head -c {page} > /tmp/page; "
                f'printf \'%s %s\\n\' "$n" "$(wc -c < /tmp/page)"; cat /tmp/page; '
                f"printf '\\n%s\\n' {mark}; exit $s"
            },
        )
        head, _, rest = res.text.partition("\n")
        body, sep, status = rest.rpartition(f"\n{mark}\n[exit status ")
        code = status.removesuffix("]")
        counts = head.split()
        if res.is_error or not sep or not code.isdigit() or int(code) not in ok or len(counts) != 2:
            raise MemdirError(f"the retrieval command failed in the shell sandbox: {res.text[-2000:]}")
        total, size = int(counts[0]), int(counts[1])
        got = body.split("\n")
        cut = size >= page
        if cut or body.endswith("\n"):
            got.pop()  # the partial line, or the empty string after the last newline
        if cut and not got:
            raise MemdirError(f"a line of the retrieval output is longer than the shell shows ({page} bytes)")
        lines += got if body or cut else []
        if not cut or len(lines) >= total:
            return lines


def _cat(harness: Harness, paths: list[str]) -> list[Doc]:
    """The files' whole texts through bash, each framed by a marker line no file holds."""
    if not paths:
        return []
    mark = f"@@memdir-{secrets.token_hex(8)}"
    command = (
        "s=0; "
        + "".join(
            f"printf '%s\\n' {shlex.quote(mark + ' ' + p)}; cat -- {shlex.quote(p)} || s=1; "
            f"printf '\\n%s\\n' {mark}; "
            for p in paths
        )
        + "exit $s"
    )
    out = "\n".join(_paged(harness, command))
    texts = {
        m.group(1): m.group(2) for m in re.finditer(rf"^{mark} (.*)\n((?s:.*?))\n{mark}$", out, re.MULTILINE)
    }
    missing = [p for p in paths if p not in texts]
    if missing:
        raise MemdirError(f"the shell did not return {', '.join(missing)}")
    # as `view` shows it (read_whole): the last line's newline is not part of what is seen
    return [Doc(p, texts[p].removesuffix("\n")) for p in paths]


def _is_index(path: str) -> bool:
    return path == "/memories/MEMORY.md" or path.endswith("/MEMORY.md")


Retriever = Callable[[Harness, str, int], list[Doc]]
DEFAULT: Retriever = grep_retrieve


@dataclass(frozen=True)
class Retrieval:
    """A tool set's retrieval: its search profile (the harness serves it), and the retriever."""

    name: str  # a TOOL_SETS name
    fn: Retriever

    @property
    def profile(self) -> str:
        return TOOL_SETS[self.name][1]


RETRIEVALS: dict[str, Retrieval] = {
    r.name: r
    for r in (
        Retrieval("center", grep_retrieve),
        Retrieval("center-bm25", bm25_retrieve),
        Retrieval("center-hybrid", hybrid_retrieve),
        Retrieval("shell", shell_retrieve),
    )
}


def retrieval(tool_set: str) -> Retrieval:
    """The retrieval for `--tool-set NAME`."""
    try:
        return RETRIEVALS[tool_set]
    except KeyError:
        raise MemdirError(
            f"no retrieval for tool set {tool_set!r}; choose one of {', '.join(RETRIEVALS)}"
        ) from None
