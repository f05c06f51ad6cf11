"""The health page: the profile, the shape panel and B1-B4, each with what it measures, then
`check`'s problems and warnings and `health`'s findings, each linking to where to fix it."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from memdir.analytics import health as health_mod
from memdir.analytics import integrity
from memdir.analytics.stats import MEANING, PANEL_KEYS, PROFILE_KEYS, SHAPE_KEYS, store_stats
from memdir.ui import listing
from memdir.ui.pages import page
from memdir.ui.views_store import source

PANELS = (
    ("Profile", "How big the store is.", PROFILE_KEYS),
    ("Shape panel", "How the tree is built: depth, branching and how even the units are.", SHAPE_KEYS),
    (
        "Taxonomy contract (B1-B4)",
        "Whether the tree's labels and groups match its content (docs/metrics.md).",
        PANEL_KEYS,
    ),
)
RULES = {
    "dangling-xref": "a 'see /memories/...' reference that points at nothing",
    "fanout": "a folder holding more entries than the cap",
    "core-budget": "core memory (the root's markdown, always loaded) over its token budget",
    "supersede": "a keyed fact with two live values, or dates that overlap",
    "stale-live": "a live value that a later line superseded",
    "spec": "the Agent Memory convention (MEMORY.md indexes, frontmatter)",
    "name-stem": "a frontmatter name that is not the file's name",
    "unread": "an entry no walk reads (too deep, a name that is not UTF-8)",
    "keyed-format": "a line that looks like a keyed fact but does not follow its grammar",
}


def health(request: Request) -> Response:
    src, store, urls = source(request)
    measured = store_stats(store)
    stats = measured.as_json()
    panels = [
        (
            title,
            blurb,
            [(k, measured.values.get(k), MEANING[k], measured.reasons.get(k)) for k in keys],
        )
        for title, blurb, keys in PANELS
    ]
    report = integrity.check(store)
    findings = health_mod.health(store)
    return page(
        request,
        "health.html",
        title=f"{src.label}: health",
        src=src,
        urls=urls,
        panels=panels,
        stats=stats,
        report=report,
        rules=RULES,
        findings=findings,
        budget=listing.budget(store),
        tab="health",
    )
