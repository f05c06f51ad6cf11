"""Frontmatter: split, parse, validate and dump, surviving the YAML 1.1 traps.

Hand- and model-written frontmatter is routinely not valid YAML (`description: Alice: vegan`)
and YAML 1.1 silently retypes plain scalars (`NO` -> False, `12:30` -> 750). We parse with a
loader that keeps every plain scalar a string, and fall back to a line-based reading when the
YAML itself is broken, so a file is never lost to its own description. The loader is
`safeyaml.load`: a frontmatter holding a YAML alias (the "billion laughs" shape) or nesting too
deep is read line by line like broken YAML, and `validate` reports it, so no write can add one.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import yaml

from memdir.conventions import LINE_BREAKS, one_line
from memdir.store import safeyaml

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MEMORY_INDEX = "MEMORY.md"


def is_memory_name(filename: str) -> bool:
    """A name `validate` takes for a memory file: `MEMORY.md`, or a kebab-case stem and `.md`."""
    return filename == MEMORY_INDEX or (filename.endswith(".md") and bool(KEBAB.match(filename[:-3])))


def memory_name(filename: str) -> str | None:
    """The memory file name `filename` maps to (docs/conventions.md, "File names"): itself when
    it is one; else its stem (the name less its last extension) with accents dropped, words
    split at case changes and joined by '-', lowercase, and `.md`: `user_preferences.txt` ->
    `user-preferences.md`. None when no letter or digit of `a-z0-9` is left to name it by."""
    if is_memory_name(filename):
        return filename
    stem = filename.rsplit(".", 1)[0] if "." in filename.lstrip(".") else filename
    plain = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-", plain)
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")
    return f"{slug}.md" if slug else None


# What a frontmatter value can be: plain scalars stay strings (`_StringLoader`); an explicit
# tag (`!!int 5`, `!!timestamp ...`, `!!binary ...`) gives its own type.
YamlValue: TypeAlias = (
    "str | int | float | bool | bytes | datetime.date | Sequence[YamlValue] | Mapping[str, YamlValue] | None"
)
Metadata = dict[str, YamlValue]  # a frontmatter mapping: top-level keys, or `metadata:`'s own

_FENCE = re.compile(r"^---[ \t]*$")
NOT_A_MAPPING = "frontmatter is not a 'key: value' mapping"
# What `safeyaml` refuses. Unlike other broken YAML (`description: Alice: vegan`, read leniently
# and let be), `validate` reports these, so no tool write can add one.
REFUSALS = tuple(f"frontmatter {why}" for why in (safeyaml.ALIAS_REFUSED, safeyaml.DEPTH_REFUSED))
# A closing line: `---` or `...`, then blanks, then any carriage returns.
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r*$", re.MULTILINE)


# libyaml's parser when PyYAML was built with it: several times faster
# (benchmarks/results/2026-12-06-docstring-figures.md, "store/frontmatter.py"), and a directory
# listing parses the frontmatter of every file it shows. Same events, same constructors, same
# resolvers.
if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StringLoader(_SafeLoader):
    """SafeLoader with no implicit typing: plain scalars stay exactly the text written."""


_StringLoader.yaml_implicit_resolvers = {}


def _construct_mapping(loader: _StringLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node)
    return mapping


_StringLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@dataclass
class Frontmatter:
    """Parsed frontmatter; `lines` counts the block including both `---` lines (0 if absent)."""

    data: Metadata
    lines: int
    raw: str
    lenient: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def present(self) -> bool:
        return self.lines > 0

    @property
    def name(self) -> str | None:
        value = self.data.get("name")
        return value if isinstance(value, str) else None

    @property
    def description(self) -> str | None:
        """The description as every reader shows it: one line. A block scalar written outside
        the tools (`description: |`) would otherwise put lines of its own into a listing, each
        free to look like an entry; `validate` still reports it (`'description' must be a
        single line`), from the raw value."""
        value = self.data.get("description")
        return one_line(value) if isinstance(value, str) else None

    @property
    def metadata(self) -> Metadata:
        value = self.data.get("metadata")
        return value if isinstance(value, dict) else {}


def _block(text: str) -> tuple[int, int, int] | None:
    """Where the frontmatter block is: the start and end of its text between the fence lines,
    and the offset its body starts at; None without one. The closing line is found by one
    regex search, not by splitting the text into lines (a 50 MB file is half a million of
    them, and the block is the first few)."""
    first_end = text.find("\n")
    if first_end == -1 or not _FENCE.match(text[:first_end].rstrip("\r")):
        return None
    close = _CLOSE.search(text, first_end + 1)
    if close is None:
        return None
    return first_end + 1, close.start(), close.end() + 1


def split(text: str) -> tuple[str | None, int]:
    """Return (frontmatter text without fences, number of lines the block occupies)."""
    block = _block(text)
    if block is None:
        return None, 0
    start, end, _ = block
    return text[start : max(start, end - 1)], text.count("\n", 0, end) + 1


def body(text: str) -> str:
    """The text after the frontmatter block's lines (the lines after the first `split(text)[1]`),
    cut at the closing line's end instead of split into lines and joined again."""
    return text[body_start(text) :]


def body_start(text: str) -> int:
    """Where `body(text)` starts in `text`, for a reader that wants only its first lines."""
    block = _block(text)
    return 0 if block is None else block[2]


def _lenient(raw: str) -> tuple[Metadata, list[str]]:
    """Read `key: value` lines when YAML refuses; nested lines go under the last top key."""
    data: Metadata = {}
    problems: list[str] = []
    current: str | None = None
    for line in raw.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if current is None:
                problems.append(f"indented line without a key: {line.strip()!r}")
                continue
            key, sep, value = line.strip().partition(":")
            nested = data.get(current)
            if not isinstance(nested, dict):
                nested = {}
                data[current] = nested
            if sep:
                nested[key.strip()] = _unquote(value.strip())
            continue
        key, sep, value = line.partition(":")
        if not sep:
            problems.append(f"line without 'key: value': {line!r}")
            continue
        current = key.strip()
        if current in data:
            problems.append(f"duplicate key {current!r}")
        value = value.strip()
        data[current] = _unquote(value) if value else {}
    return data, problems


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# A line of the common frontmatter (`name: n000001`, `description: note 1`) that YAML reads as
# exactly `{key: value}`: a plain key, `: `, a plain scalar that starts with no indicator. The
# value is then checked in `_plain_value` for what ends or breaks a plain scalar.
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}): +([^-?:,\[\]{}#&*!|>'\"%@`\s].*)")


def _plain_value(value: str) -> bool:
    """True when YAML reads `value` (after `key: `) as this very string: printable (which also
    excludes tabs, CR and the line breaks YAML knows beyond LF), no trailing blank, no `: ` or
    final `:` (a mapping inside the value), no ` #` (a comment)."""
    return value.isprintable() and not value.endswith((" ", ":")) and ": " not in value and " #" not in value


def _plain_mapping(raw: str) -> Metadata | None:
    """The mapping of a frontmatter made only of plain `key: value` lines, read without the YAML
    parser; None for anything else (the parser decides). At 100,000 files, parsing two-line
    blocks with libyaml (plus the alias check) was most of `memdir check`; the property test
    (tests/store/test_frontmatter_fast_path.py) holds this reading equal to the parser's."""
    data: Metadata = {}
    for line in raw.split("\n"):
        m = _PLAIN_LINE.fullmatch(line)
        if m is None or not _plain_value(m[2]) or m[1] in data:
            return None
        data[m[1]] = m[2]
    return data


def parse(text: str) -> Frontmatter:
    """Parse the frontmatter of a whole file text; never raises."""
    raw, count = split(text)
    if raw is None:
        return Frontmatter({}, 0, "")
    plain = _plain_mapping(raw)
    if plain is not None:
        return Frontmatter(plain, count, raw)
    return _parsed(raw, count)


def _parsed(raw: str, count: int) -> Frontmatter:
    """The frontmatter block `raw` (of `count` lines) as the YAML parser reads it, or line by
    line when the parser refuses it."""
    try:
        loaded = safeyaml.load(raw, _StringLoader)
    except yaml.YAMLError as exc:
        data, problems = _lenient(raw)
        reason = str(exc).partition("\n")[0]
        why = (
            f"frontmatter {reason}"
            if isinstance(exc, safeyaml.RefusedYAML)
            else f"not strict YAML ({reason})"
        )
        return Frontmatter(data, count, raw, lenient=True, problems=[why, *problems])
    if loaded is None:
        return Frontmatter({}, count, raw)
    if not isinstance(loaded, dict):
        return Frontmatter({}, count, raw, problems=[NOT_A_MAPPING])
    return Frontmatter({str(k): v for k, v in loaded.items()}, count, raw)


_KEY_LINE = re.compile(r"(?:name|description|metadata)[ \t]*:")


def broken_fence(text: str) -> str | None:
    """What is wrong with a frontmatter block that lost a fence, phrased as what to fix; None when
    the text has a whole block or none at all. An index may go without frontmatter, so without
    this a broken one read as none and `validate` passed it (issue 32: the local model rewrote the
    root MEMORY.md with its opening fence lost)."""
    if _block(text) is not None:
        return None
    first = text.lstrip("\r\n").partition("\n")[0].rstrip("\r")
    if _FENCE.match(first):
        return (
            "the frontmatter fence is not closed: its closing '---' line is missing; end the "
            "block with a line '---'"
        )
    if _KEY_LINE.match(first):
        return (
            "the frontmatter fence is lost: the file opens with a frontmatter key but not with "
            "'---'; put a line '---' before the keys and another after them"
        )
    return None


def validate(text: str, filename: str) -> list[str]:
    """Every rule the file breaks, each phrased as what to fix. Empty means valid."""
    fm = parse(text)
    errors: list[str] = []
    is_index = filename == MEMORY_INDEX
    stem = filename[:-3] if filename.endswith(".md") else filename
    if not fm.present:
        broken = broken_fence(text)
        if broken is not None:
            return [broken]
        if is_index:
            return []
        return [
            "missing frontmatter: the file must open with '---', 'name: "
            f"{stem}', 'description: <one line>', '---'"
        ]
    errors.extend(p for p in fm.problems if p.startswith("duplicate") or p in (NOT_A_MAPPING, *REFUSALS))
    if not is_index:
        if not KEBAB.match(stem):
            better = memory_name(filename)
            errors.append(
                f"file name '{filename}' is not kebab-case; use lowercase words joined by '-', "
                + (f"e.g. '{better}'" if better else "e.g. 'travel-plans.md'")
            )
        name = fm.data.get("name")
        if name is None:
            errors.append(f"frontmatter has no 'name'; add 'name: {stem}'")
        elif not isinstance(name, str) or name != stem:
            errors.append(f"frontmatter name {name!r} does not equal the file stem '{stem}'")
    desc = fm.data.get("description")
    if desc is None:
        if not is_index:
            errors.append("frontmatter has no 'description'; add a one-line 'description: ...'")
    elif not isinstance(desc, str) or not desc.strip():
        errors.append("'description' must be one non-empty line of text")
    elif LINE_BREAKS.search(desc.strip()):  # U+2028 and the rest too: readers may break there
        errors.append("'description' must be a single line")
    if "metadata" in fm.data and not isinstance(fm.data["metadata"], dict):
        errors.append(
            "'metadata' must be a mapping of 'key: value' lines indented under it (e.g. 'metadata:\\n"
            "  type: note'); or leave 'metadata' out, it is optional"
        )
    return errors


def dump(name: str, description: str, metadata: Mapping[str, YamlValue] | None = None) -> str:
    """Render a frontmatter block (with fences and trailing newline) that parses back exactly."""
    data: Metadata = {"name": name, "description": description}
    if metadata:
        data["metadata"] = metadata
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)
    return f"---\n{body}---\n"
