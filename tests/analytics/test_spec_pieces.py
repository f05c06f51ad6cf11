"""The pieces `memdir check` reads a store with in one pass, each against the whole-text
computation it stands for: lines found without splitting, the frontmatter block found without
splitting, core memory counted in pieces, and check handed the texts health already read."""

from __future__ import annotations

import itertools
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memdir.analytics import integrity
from memdir.analytics.health_cache import read_listing
from memdir.analytics.tree import Snapshot, build
from memdir.store import frontmatter, spec
from memdir.store.boundary import neutralise
from memdir.store.store import Store
from memdir.tokens import count_tokens

PROPS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TEXT = st.lists(st.sampled_from(["a", "|", "\n", "\r", " ", "/memories", "x|y", "\n\n"]), max_size=40).map(
    "".join
)


@PROPS
@given(_TEXT, st.sampled_from(["|", "/memories", "a", "\r"]))
def test_lines_containing_is_the_split_lines_that_hold_the_needle(text: str, needle: str) -> None:
    split = [(i, line) for i, line in enumerate(text.split("\n"), start=1) if needle in line]
    assert list(spec.lines_containing(text, needle)) == split


_FM_LINE = st.sampled_from(
    [
        "---",
        "--- ",
        "---\r",
        "...",
        "----",
        "name: a",
        "description: d",
        "metadata:",
        "  k: v",
        "",
        "# x",
        "a: b: c",
    ]
)


def _split_by_lines(text: str) -> tuple[str | None, int]:
    """`frontmatter.split` as it was defined before it stopped splitting the whole text."""
    lines = text.split("\n")
    if not frontmatter._FENCE.match(lines[0].rstrip("\r")):
        return None, 0
    for i in range(1, len(lines)):
        if re.match(r"^(?:---|\.\.\.)[ \t]*$", lines[i].rstrip("\r")):
            return "\n".join(lines[1:i]), i + 1
    return None, 0


@PROPS
@given(st.lists(_FM_LINE, max_size=12).map("\n".join), st.sampled_from(["a.md", "MEMORY.md"]))
def test_the_frontmatter_block_is_the_one_split_lines_find(text: str, name: str) -> None:
    assert frontmatter.split(text) == _split_by_lines(text)
    raw, count = frontmatter.split(text)
    assert frontmatter.body(text) == ("\n".join(text.split("\n")[count:]) if raw is not None else text)


def test_check_handed_healths_texts_equals_check_reading_them(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / "people").mkdir(parents=True)
    (root / "skills" / "pdf").mkdir(parents=True)
    (root / "MEMORY.md").write_text("---\ndescription: root\n---\n# Memory\nsee /memories/people/bob.md\n")
    (root / "people" / "alice.md").write_text(
        "---\nname: alice\ndescription: Alice\n---\n# Alice\n## Diet\n"
        "- alice | diet: vegan (since 2023-05-02) [S6T5]\n- alice | diet: meat (since 2021-01-01) [S1T1]\n"
        "- alice | job nurse [S2T2]\n- bob | pet: x [S3T3]\nsee /memories/people/alice.md > ## Work\n"
    )
    (root / "people" / "Bad.md").write_text("no frontmatter\n")
    (root / "people" / "latin.md").write_bytes(b"---\nname: latin\ndescription: \xe9\n---\nbody\n")
    (root / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs\n---\n")
    (root / "core.md").write_text("---\nname: core\ndescription: c\n---\n" + "word " * 400 + "\n")
    store = Store(root)
    alone = integrity.check(store, budget=100)
    handed = integrity.check(store, budget=100, walked=read_listing(store).walked)
    assert alone.as_json() == handed.as_json()
    rules = {p.rule for p in alone.problems}
    assert {"spec", "dangling-xref", "supersede", "core-budget"} <= rules
    assert alone.warnings and alone.counts["core_tokens"] > 100


_TOKEN_TEXT = st.lists(
    st.sampled_from([*"ab Z09/\n\t<>#-*|:.'é日\r\xa0\u2028", "'s", "//", "\n/", "\n\n", "word", " \n"]),
    max_size=120,
).map("".join)


@PROPS
@given(_TOKEN_TEXT)
def test_counting_at_token_cuts_adds_up_to_the_whole(text: str) -> None:
    cuts = [m.start() + 1 for m in spec._TOKEN_CUT.finditer(text)]
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    assert sum(count_tokens(p) for p in pieces) == count_tokens(text)


_CORE = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c-d"]), _TOKEN_TEXT), max_size=4, unique_by=lambda t: t[0]
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(_CORE, st.integers(1, 40))
@example(files=[("a", "<|")], piece=1)  # found by CI: a body the boundary escapes
def test_core_tokens_in_pieces_equal_the_context_count(
    tmp_path: Path, files: list[tuple[str, str]], piece: int
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / "MEMORY.md").write_text("# Memory\n\nsee the notes\n")
    for stem, body in files:
        (root / f"{stem}.md").write_text(body, encoding="utf-8", newline="")
    store = Store(root)
    order = ["MEMORY.md", *sorted(f"{stem}.md" for stem, _ in files)]
    # as a model is shown them: inside the data boundary, a lookalike's `<` escaped (store/boundary.py)
    bodies = {
        name: neutralise((root / name).read_bytes().decode("utf-8", "replace")).rstrip() for name in order
    }
    block = "\n".join(f'<memory_file path="/memories/{n}">\n{bodies[n]}\n</memory_file>' for n in order)
    assert f"<core_memory>\n{block}\n</core_memory>" in spec.context(store).text
    assert spec.context(store).tokens == count_tokens(block)
    assert spec.core_tokens(store, piece=piece) == count_tokens(block)


def test_file_labels_made_on_first_read_are_stem_and_description() -> None:
    files = {
        ("MEMORY.md",): "---\ndescription: root index\n---\n# Memory\n",
        ("people", "MEMORY.md"): "---\ndescription: who is who\n---\n# People\n",
        ("people", "alice.md"): "---\nname: alice\ndescription: Alice Park\n---\nshort\n",
        ("people", "bob.md"): "no frontmatter at all, a note long enough to be measured by B1\n",
        ("people", "eve.md"): "---\nname: eve\ndescription: [broken: yaml\n---\n# Eve\n## Job\ntext\n",
    }
    tree = build(Snapshot.from_files(files))
    eve = frontmatter.parse(files[("people", "eve.md")]).description
    labels = {n.where: n.label for n in tree.nodes if n.kind in ("file", "dir")}
    assert labels == {
        "/memories/people": "people who is who",
        "/memories/MEMORY.md": "MEMORY root index",
        "/memories/people/MEMORY.md": "MEMORY who is who",
        "/memories/people/alice.md": "alice Alice Park",
        "/memories/people/bob.md": "bob",
        "/memories/people/eve.md": f"eve {eve}".strip(),
    }
