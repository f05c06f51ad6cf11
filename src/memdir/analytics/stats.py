"""`memdir stats`: the store profile, the shape panel and the taxonomy-contract panel in one record.

Measured on the tree as the paper counts it: memdir's own index files (`MEMORY.md`) are left
out, as the paper's stores have none, so a verbatim dump of 30 sessions is 30 files (Table 3);
`memdir_files`, `memdir_sections` and `memdir_kb` count the store with them (docs/metrics.md,
"Store profile")."""

from __future__ import annotations

from dataclasses import dataclass

from memdir.analytics import taxonomy
from memdir.analytics.tree import Metrics, PanelDetails, Snapshot, build, profile_and_shape, read_store
from memdir.jsontypes import JsonObject, record_json
from memdir.store.store import Store

PROFILE_KEYS = (
    "dirs",
    "files",
    "sections",
    "kb",
    "xrefs",
    "units",
    "memdir_files",
    "memdir_sections",
    "memdir_kb",
)
SHAPE_KEYS = ("depth_mean", "depth_max", "fanout_mean", "fanout_max", "cv")
PANEL_KEYS = ("b1_mean", "b1_min", "b2", "b3", "b3_loo", "b4", "b4_pairs")
KEYS = PROFILE_KEYS + SHAPE_KEYS + PANEL_KEYS

MEANING: dict[str, str] = {
    "dirs": "folders, the root not counted",
    "files": ".md files, memdir's index files (MEMORY.md) not counted",
    "sections": "headings of any level, outside index files",
    "kb": "size of the .md files in KiB, index files not counted",
    "xrefs": "'see /memories/...' cross-references",
    "units": "content units: files without headings and headings without subheadings",
    "memdir_files": "memdir's count: .md files with the MEMORY.md index files",
    "memdir_sections": "memdir's count: headings with those of the index files",
    "memdir_kb": "memdir's count: KiB with the index files",
    "depth_mean": "mean unit depth in the combined tree (Sackin index / leaves)",
    "depth_max": "deepest unit (root = 0; folder, file and each heading level add one)",
    "fanout_mean": "mean number of children of internal nodes",
    "fanout_max": "largest number of children of one node",
    "cv": "coefficient of variation of unit sizes (std / mean of characters)",
    "b1_mean": "B1 sibling label distinctness: mean 1-cos of sibling labels (higher = easier to tell apart)",
    "b1_min": "B1 worst pair: the most confusable siblings (0 = identical labels)",
    "b2": "B2 sibling cohesion: same-parent / cross-parent mean unit cosine (>1 = siblings belong together)",
    "b3": "B3 scope leakage: share of units closer to another group's centroid than to their own",
    "b3_loo": "B3 with the unit left out of its own group's centroid (not the study's B3)",
    "b4": "B4 tree-wide proximity: Spearman(tree distance, content distance) over unit pairs",
    "b4_pairs": "unit pairs B4 was computed on",
}


@dataclass
class Stats:
    values: Metrics
    reasons: dict[str, str]
    details: PanelDetails

    def as_json(self) -> JsonObject:
        """The flat record `memdir stats --json` prints: the measures by name, then the rest.
        A program reads `values`, `reasons` and `details`, which are typed."""
        out: JsonObject = {k: self.values.get(k) for k in KEYS}
        out["bytes"] = self.values.get("bytes")
        out["units_measured"] = self.details.get("units_measured")
        out["null_reasons"] = {k: v for k, v in self.reasons.items() if out.get(k) is None}
        out["details"] = record_json(self.details)
        return out


def compute(snap: Snapshot) -> Stats:
    tree = build(snap, indexes=False)
    values, reasons = profile_and_shape(tree)
    panel = taxonomy.panel(tree)
    values.update(panel.values)
    reasons.update(panel.reasons)
    details = PanelDetails(**panel.details)
    if snap.unread:  # measured without these: say so rather than report a smaller store silently
        details["unread"] = list(snap.unread)
    return Stats(values, reasons, details)


def store_stats(store: Store) -> Stats:
    return compute(read_store(store))
