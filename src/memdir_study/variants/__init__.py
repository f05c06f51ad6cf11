"""Memory variants: builders that turn one conversation into one store, with their cost.

`VARIANTS` (`registry.py`) holds one `ConversationVariant` entry per variant: its builder and every
trait the study reads of it (the paper's or memdir's, whether it builds a store, organized, keyed,
its search prompt form, its `--help` note). The builders and their entries are `builders.py`:
closed-book, chunk-retrieval, verbatim-dump (`dump.py`), foldered, reorg-preserve, reorg-condense,
agent-curated, and memdir's own chunk-retrieval-hybrid, agent-curated-keyed and split-curated (run
only when named). Each records its build cost (`base.py`); foldered is verified move-only, reorg-*
checked against the dump with `diff --facts`; a variant that needs a model is skipped offline with
the reason.
"""

from memdir_study.variants import builders  # noqa: F401  (registers every variant)
from memdir_study.variants.base import (
    BuildChecks,
    BuildContext,
    BuildCost,
    Built,
    FoldersMoved,
    VariantUnavailable,
    build_cost,
)
from memdir_study.variants.registry import (
    VARIANTS,
    ConversationVariant,
    get_variant,
    parse_variants,
    register,
    study_variants,
    variant_role,
    variants_help,
)

__all__ = [
    "VARIANTS",
    "BuildChecks",
    "BuildContext",
    "BuildCost",
    "Built",
    "ConversationVariant",
    "FoldersMoved",
    "VariantUnavailable",
    "build_cost",
    "get_variant",
    "parse_variants",
    "register",
    "study_variants",
    "variant_role",
    "variants_help",
]
