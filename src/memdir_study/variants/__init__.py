"""Memory variants: builders that turn one conversation into one store, with their cost.

`VARIANTS` (`builders.py`) holds a `ConversationVariant` (name and builder) each: closed-book,
chunk-retrieval, verbatim-dump (`dump.py`), foldered, reorg-preserve, reorg-condense,
agent-curated, and memdir's own chunk-retrieval-hybrid (run only when named). Each records its
build cost (`base.py`); foldered is verified move-only, reorg-* checked against the dump with
`diff --facts`; a variant that needs a model is skipped offline with the reason.
"""

from memdir_study.variants.base import BuildContext, Built, VariantUnavailable, build_cost
from memdir_study.variants.builders import VARIANTS, ConversationVariant

# `all` is the study's variants; memdir's own (chunk-retrieval-hybrid) run when named.
ALL = tuple(name for name, v in VARIANTS.items() if v.study)
ORDER = tuple(VARIANTS)


def parse_variants(spec: str) -> list[str]:
    """`all` or a comma-separated list of variant names, in the study's order."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names or names == ["all"]:
        return list(ALL)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise VariantUnavailable(
            f"unknown variant(s) {', '.join(unknown)}; choose from all, {', '.join(ORDER)}"
        )
    return [n for n in ORDER if n in names]


__all__ = [
    "ALL",
    "VARIANTS",
    "BuildContext",
    "Built",
    "ConversationVariant",
    "VariantUnavailable",
    "build_cost",
    "parse_variants",
]
