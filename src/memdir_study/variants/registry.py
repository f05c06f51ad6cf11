"""The conversational variants' registry: one `ConversationVariant` entry per variant holds every
trait the study reads of it, so adding a variant is one `register(...)` call beside its builder
(builders.py), and the runner, `--stores-from`, the search prompts and `memdir study eval --help`
all follow from that entry (docs/study.md, Memory variants).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from memdir.agents.roles import SEARCH_ROUNDS_ORGANIZED, SEARCH_ROUNDS_OTHER, Role, get_role
from memdir_study.roles import PROMPTS
from memdir_study.variants.base import BuildContext, Built, VariantUnavailable


@dataclass(frozen=True)
class ConversationVariant:
    """A variant of the conversational study: its name, the builder of its store, and its traits."""

    name: str
    build: Callable[[BuildContext], Awaitable[Built]]
    note: str = ""  # shown after its name by `memdir study eval --help`
    study: bool = True  # the paper's variant (`--variants all`); False: memdir's own, run when named
    builds_store: bool = True  # False (closed-book): nothing to build, nothing to take --stores-from
    needs_model: bool = False  # the builder role cannot be played offline
    builds_with_tools: bool = False  # its builder works through the tool set's build profile
    # An LLM organized the store: the answering role over it gets the larger round cap (40, not 20).
    organized: bool = False
    # memdir's conventions (keyed facts, one live value per key, docs/conventions.md) in its
    # prompts; the study's own variants follow the paper's taxonomy rules only.
    keyed: bool = False
    # Its form of the search prompt (the paper's Appendix A.3), a template of `study/prompts/`, each
    # built from the product's shared blocks; None: the base form, the product's `search`.
    search_form: str | None = None


VARIANTS: dict[str, ConversationVariant] = {}
"""Every registered variant by name, in the study's order (registration order)."""


def register(variant: ConversationVariant) -> ConversationVariant:
    """Add `variant` to the registry (after the others); a name taken twice is refused."""
    if variant.name in VARIANTS:
        raise VariantUnavailable(
            f"variant {variant.name!r} is already registered; give the new one another name"
        )
    VARIANTS[variant.name] = variant
    return variant


def get_variant(name: str) -> ConversationVariant:
    if name not in VARIANTS:
        raise VariantUnavailable(f"unknown variant {name!r}; choose from {', '.join(VARIANTS)}")
    return VARIANTS[name]


def study_variants() -> list[str]:
    """What `--variants all` runs: the paper's variants, in the study's order."""
    return [name for name, v in VARIANTS.items() if v.study]


def parse_variants(spec: str) -> list[str]:
    """`all` or a comma-separated list of variant names, in the study's order."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names or names == ["all"]:
        return study_variants()
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise VariantUnavailable(
            f"unknown variant(s) {', '.join(unknown)}; choose from all, {', '.join(VARIANTS)}"
        )
    return [n for n in VARIANTS if n in names]


def variants_help() -> str:
    """The `--variants` help, written from the registry."""

    def shown(v: ConversationVariant) -> str:
        notes = [n for n in (v.note, "needs a model" if v.needs_model else "") if n]
        return f"{v.name} ({'; '.join(notes)})" if notes else v.name

    ours = [shown(v) for v in VARIANTS.values() if not v.study]
    return (
        f"all (the study's: {', '.join(shown(VARIANTS[n]) for n in study_variants())}), or a "
        f"comma-separated list of names; memdir's own, run only when named: {', '.join(ours)}."
    )


def variant_role(name: str, variant: str, profile: str | None = None) -> Role:
    """The product's role `name` (management, answer, reorganize_*) as the study's `variant` plays
    it: the answering role's prompt form and round cap by the kind of store searched (40 rounds
    over an organized store, 20 over the others), and memdir's conventions only in memdir's own
    variants. A name not registered (a store searched outside the study's cells) has the
    defaults: the base form, 20 rounds, the paper's rules."""
    v = VARIANTS.get(variant)
    role = replace(get_role(name, profile), keyed=v is not None and v.keyed)
    if name != "answer":
        return role
    rounds = SEARCH_ROUNDS_ORGANIZED if v is not None and v.organized else SEARCH_ROUNDS_OTHER
    if v is not None and v.search_form is not None:
        role = replace(role, template=v.search_form, package=PROMPTS)
    return replace(role, round_cap=rounds)
