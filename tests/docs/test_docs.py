"""The docs keep fitting (CONTRIBUTING.md, "Docs"): every relative link in the README and the docs
pages names a file of the repository, and the word budgets hold: the README and the README with
docs/ together (counted as `wc -w` counts)."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README_WORDS = 1_500
TOTAL_WORDS = 25_000

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
REPO_PATH = re.compile(r"(?<![\w/.])((?:docs|benchmarks/results)/[\w.-]+\.md)")


def pages() -> list[Path]:
    """The pages a reader is sent to: the top-level guides, docs/ and the dated results."""
    top = [
        REPO / name
        for name in (
            "README.md",
            "ARCHITECTURE.md",
            "CONTRIBUTING.md",
            "CHANGELOG.md",
            "benchmarks/README.md",
        )
    ]
    return (
        [p for p in top if p.is_file()]
        + sorted((REPO / "docs").glob("*.md"))
        + sorted((REPO / "benchmarks" / "results").glob("*.md"))
    )


def prose(text: str) -> str:
    """The text outside fenced code blocks, where a link is an example, not a reference."""
    return "\n".join(part for i, part in enumerate(re.split(r"^```.*$", text, flags=re.M)) if i % 2 == 0)


def words(path: Path) -> int:
    return len(path.read_bytes().split())


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    text = prose(page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(re.sub(r"`[^`]*`", "", text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).resolve().exists():
            broken.append(target)
    for path in REPO_PATH.findall(text):
        if not (REPO / path).exists():
            broken.append(path)
    assert not broken, f"{page.relative_to(REPO)} names files that do not exist: {broken}"


def test_links_are_checked_at_all() -> None:
    """The link check reads the README's map (a regex that matched nothing would pass anything)."""
    found = LINK.findall(prose((REPO / "README.md").read_text(encoding="utf-8")))
    assert "docs/reliability.md" in found and "CONTRIBUTING.md" in found


def test_readme_fits() -> None:
    count = words(REPO / "README.md")
    assert count <= README_WORDS, f"README.md has {count} words, over {README_WORDS}: move detail to docs/"


def test_readme_and_docs_fit() -> None:
    counted = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    count = sum(words(p) for p in counted)
    assert count <= TOTAL_WORDS, (
        f"README.md and docs/ have {count} words, over {TOTAL_WORDS}: "
        "move measured figures to benchmarks/results/ or merge pages"
    )
