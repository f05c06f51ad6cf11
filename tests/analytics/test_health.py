"""health (docs/health.md): every finding kind planted in a real store and found with its path,
action and detail; a clean store has none and the tool says so; the tool is read-only, offered
only in manage-health, and its data follows its schema (through the MCP client too); keys
stand across edits that leave the finding be; the incremental path agrees with a fresh one."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import numpy as np
from mcp import Client
from tests.conftest import fm, snapshot

from memdir.analytics import health_cache, taxonomy
from memdir.analytics.health import KINDS, Finding, HealthReport, health, introduced
from memdir.analytics.tree import Node, build
from memdir.conventions import parse_keyed
from memdir.errors import MemdirError
from memdir.mcp.server import build_server
from memdir.store.journal import Journal
from memdir.store.store import Store
from memdir.tools import outputs
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store

INDEX = "---\ndescription: {d}\n---\n# {t}\n"
CARS = [
    "Bob changed the engine oil and the brake pads of his old truck at the garage.",
    "The mechanic said the truck needs new tires and a gearbox check before winter.",
    "Bob rebuilt the truck engine with new pistons; the garage lent him the oil pump.",
    "He bought winter tires for the truck and asked the mechanic about the brakes.",
    "The garage fixed the truck's brakes and topped up the engine oil for the trip.",
    "Bob's truck failed its inspection: worn tires, a leaking gearbox, weak brakes.",
]
COOKING = [
    "Alice bakes sourdough bread: flour, water, salt, and an overnight rise in the oven.",
    "Her butter cookie recipe needs flour, sugar and butter, baked in a hot oven.",
    "Alice kneads the dough for pizza, bakes it in the oven and adds basil and butter.",
    "The oven recipe for her apple cake takes flour, sugar, butter and two eggs.",
]
CAKE = "Alice bakes the cake in the oven with flour, sugar, butter and eggs from her recipe."


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def clean_store(root: Path) -> None:
    """A sound store: short indexes, distinct names, no duplicate, every fact in its place."""
    write(
        root,
        {
            "MEMORY.md": INDEX.format(d="Root index", t="Memory") + "- people/\n",
            "people/MEMORY.md": INDEX.format(d="One file per person", t="People"),
            "people/alice.md": fm(
                "alice",
                "Alice Park, a baker",
                "# Alice\n## Diet\n- alice | diet: vegan (since 2023-05-02) [S6T5]\n"
                "- ~~alice | diet: vegetarian~~ (2022-01-10 until 2023-05-02) [S1T4]\n"
                "## Baking\n" + "\n".join(f"- {t} [S2T{i}]" for i, t in enumerate(COOKING)) + "\n",
            ),
            "people/bob.md": fm(
                "bob",
                "Bob Stone, who repairs trucks",
                "# Bob\n## Job\n- bob | job: mechanic (since 2021-03-01) [S2T1]\n"
                "## Truck\n" + "\n".join(f"- {t} [S3T{i}]" for i, t in enumerate(CARS)) + "\n"
                "The cakes he eats: see /memories/people/alice.md > # Alice > ## Baking\n",
            ),
        },
    )


def kinds(report: HealthReport) -> list[str]:
    return [f.kind for f in report.findings]


def one(report: HealthReport, kind: str) -> Finding:
    found = [f for f in report.findings if f.kind == kind]
    assert len(found) == 1, (kind, [f.message for f in report.findings])
    return found[0]


def test_a_clean_store_has_no_findings_and_the_tool_says_so(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    report = health(Store(root))
    assert report.findings == [], [f.message for f in report.findings]
    assert report.counts["files"] == 4 and all(report.counts[k] == 0 for k in KINDS)
    r = Harness(open_store(root), "manage-health").call("health", {})
    assert not r.is_error and "no findings, nothing to fix" in r.text, r.text
    assert r.data == {
        "path": "/memories",
        "total": 0,
        "not_shown": 0,
        "counts": dict.fromkeys(KINDS, 0),
        "findings": [],
    }


def test_stale_live_value_found_and_retired_by_its_replacement(tmp_path: Path) -> None:
    """Design rule 3: a value struck through in one file but live in another. The finding's
    replacement line, written by str_replace, retires it (what the offline curator will do)."""
    root = tmp_path / "m"
    clean_store(root)
    write(
        root,
        {
            "people/bob.md": fm(
                "bob",
                "Bob Stone",
                "# Bob\n## Job\n- bob | job: doctor (since 2024-03-01) [S5T2]\n"
                "- ~~bob | job: nurse~~ (2022-01-01 until 2024-03-01) [S1T2]\n",
            ),
            "work/MEMORY.md": INDEX.format(d="Work", t="Work"),
            "work/shifts.md": fm(
                "shifts", "Shifts", "# Shifts\n* bob | job: nurse (since 2022-01-01) [S1T2]\n"
            ),
        },
    )
    store = open_store(root)
    f = one(health(store), "stale-live")
    assert f.path == "/memories/work/shifts.md" and f.related == ("/memories/people/bob.md",)
    assert f.key == "stale-live:bob | job:/memories/work/shifts.md:nurse"
    d = f.detail
    assert d["reason"] == "superseded-elsewhere" and (d["subject"], d["attribute"]) == ("bob", "job")
    assert d["stale"] == {
        "path": "/memories/work/shifts.md",
        "line": 6,
        "value": "nurse",
        "since": "2022-01-01",
        "until": None,
        "text": "* bob | job: nurse (since 2022-01-01) [S1T2]",
    }
    assert (d["current"]["path"], d["current"]["line"], d["current"]["value"]) == (
        "/memories/people/bob.md",
        7,
        "doctor",
    )
    assert [(s["path"], s["line"], s["until"]) for s in d["superseded"]] == [
        ("/memories/people/bob.md", 8, "2024-03-01")
    ]
    assert d["replacement"] == "* ~~bob | job: nurse~~ (2022-01-01 until 2024-03-01) [S1T2]"
    past = parse_keyed("x", 1, d["replacement"])
    assert past is not None and not past.live and past.until == "2024-03-01"
    assert "replace line 6 with" in f.action and d["replacement"] in f.action
    h = Harness(store, "manage-health")
    assert not h.call(
        "str_replace", {"path": f.path, "old_str": d["stale"]["text"], "new_str": d["replacement"]}
    ).is_error
    assert "stale-live" not in kinds(health(store))


def test_two_live_values_the_older_is_stale_and_dates_that_disagree(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    write(
        root,
        {
            "people/carol.md": fm(
                "carol",
                "Carol",
                "# Carol\n- carol | home: Boston (since 2021-01-01) [S1T1]\n"
                "- dave | pet: cat (since 2020-01-01) [S1T3]\n"
                "- ~~dave | pet: dog~~ (2019-01-01 until 2022-06-01) [S1T4]\n",
            ),
            "places/MEMORY.md": INDEX.format(d="Places", t="Places"),
            "places/homes.md": fm(
                "homes", "Homes", "# Homes\n- carol | home: Denver (since 2023-04-01) [S4T1]\n"
            ),
        },
    )
    report = health(Store(root))
    stale = one(report, "stale-live")
    assert stale.path == "/memories/people/carol.md" and stale.detail["reason"] == "older"
    assert stale.detail["current"]["value"] == "Denver"
    assert stale.detail["replacement"] == "- ~~carol | home: Boston~~ (2021-01-01 until 2023-04-01) [S1T1]"
    dates = one(report, "supersede-dates")
    assert (
        dates.path == "/memories/people/carol.md"
        and dates.key == "supersede-dates:dave | pet:/memories/people/carol.md"
    )
    assert (
        dates.detail["live"]["since"] == "2020-01-01"
        and dates.detail["superseded"][0]["until"] == "2022-06-01"
    )
    assert kinds(report)[:2] == ["stale-live", "supersede-dates"]  # wrong answers first


def test_dangling_references_name_the_line_and_what_they_may_have_meant(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    bob = (root / "people/bob.md").read_text()
    write(
        root,
        {"people/bob.md": bob.replace("> ## Baking", "> ## Cakes") + "see /memories/alice.md for more\n"},
    )
    report = health(Store(root))
    found = {f.detail["target"]: f for f in report.findings if f.kind == "dangling-ref"}
    assert set(found) == {"/memories/people/alice.md", "/memories/alice.md"}
    moved = found["/memories/alice.md"]
    assert (
        moved.path == "/memories/people/bob.md"
        and moved.key == "dangling-ref:/memories/people/bob.md:/memories/alice.md"
    )
    assert moved.detail["candidates"] == ["/memories/people/alice.md"]
    assert moved.detail["text"] == "see /memories/alice.md for more"
    assert "change it to 'see /memories/people/alice.md'" in moved.action
    section = found["/memories/people/alice.md"]
    assert section.detail["section"] == "# Alice > ## Cakes" and section.detail["line"] == 15
    assert section.detail["candidates"] == ["# Alice", "# Alice > ## Diet", "# Alice > ## Baking"]
    assert "# Alice > ## Diet" in section.action


def test_fanout_and_core_budget_at_the_limits_given(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    write(root, {f"people/p{i}.md": fm(f"p{i}", f"person number {i}") for i in range(3)})
    report = health(Store(root), fanout_cap=4, core_budget=10)
    fan = one(report, "fanout")
    assert fan.path == "/memories/people" and fan.key == "fanout:/memories/people"
    assert fan.detail == {
        "entries": 6,
        "cap": 4,
        "children": ["MEMORY.md", "alice.md", "bob.md", "p0.md", "p1.md", "p2.md"],
    }
    core = one(report, "core-budget")
    assert core.path == "/memories" and core.detail["budget"] == 10 and core.detail["tokens"] > 10
    assert [f["path"] for f in core.detail["files"]] == ["/memories/MEMORY.md"] and core.related == (
        "/memories/MEMORY.md",
    )
    assert kinds(health(Store(root))) == []  # at the defaults (cap 50, budget 30,000) all is well


def test_the_tool_takes_the_operators_guard_limits(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    h = Harness(open_store(root, guards=Guards(fanout_cap=2)), "manage-health")
    r = h.call("health", {})
    assert r.data is not None and r.data["counts"]["fanout"] == 1
    assert "/memories/people holds 3 entries, over the cap of 2" in r.text


def content_store(root: Path) -> None:
    """Two topic folders, a cooking note filed with the cars, a copied note, a long log."""
    write(
        root,
        {
            "MEMORY.md": INDEX.format(d="Root index", t="Memory"),
            "cars/MEMORY.md": INDEX.format(d="Cars", t="Cars"),
            "cooking/MEMORY.md": INDEX.format(d="Cooking", t="Cooking"),
            **{f"cars/c{i}.md": fm(f"c{i}", f"truck note {i}", text + "\n") for i, text in enumerate(CARS)},
            **{f"cooking/k{i}.md": fm(f"k{i}", f"kitchen note {i}", COOKING[i] + "\n") for i in range(3)},
            "cars/cake.md": fm("cake", "a cake", CAKE + "\n"),
            "cooking/k0-copy.md": fm("k0-copy", "kitchen note 0 again", COOKING[0] + " Twice.\n"),
            "cooking/long.md": fm(
                "long",
                "many loaves",
                "# Loaves\n## Log\n"
                + "- a loaf of rye bread [S1T1]\n" * 120
                + "## Log\nTwo loaves of spelt went to the neighbours. [S1T2]\n",
            ),
        },
    )


def test_near_duplicates_leaked_units_confusable_names_and_over_long_sections(tmp_path: Path) -> None:
    root = tmp_path / "m"
    content_store(root)
    report = health(Store(root))
    leaked = one(report, "leaked")
    assert leaked.path == "/memories/cars/cake.md" and leaked.key == "leaked:/memories/cars/cake.md"
    assert leaked.detail["own_group"]["ref"] == "/memories/cars"
    assert leaked.detail["nearer_group"]["ref"] == "/memories/cooking"
    assert leaked.detail["cos_nearer"] > leaked.detail["cos_own"]
    assert "move it into /memories/cooking" in leaked.action
    dup = one(report, "near-duplicate")
    assert {dup.detail["a"]["ref"], dup.detail["b"]["ref"]} == {
        "/memories/cooking/k0.md",
        "/memories/cooking/k0-copy.md",
    }
    assert (
        dup.detail["cosine"] >= 0.85
        and dup.key == "near-duplicate:/memories/cooking/k0-copy.md|/memories/cooking/k0.md"
    )
    conf = one(report, "confusable")  # two sections with one heading: a second '## Log' was added
    log = "/memories/cooking/long.md > # Loaves > ## Log"
    assert (conf.detail["a"]["ref"], conf.detail["b"]["ref"]) == (log, log + " [2]")
    assert (conf.detail["a"]["line"], conf.detail["b"]["line"]) == (6, 127)
    assert conf.key == f"confusable:{log}|{log} [2]" and conf.detail["distance"] == 0.0
    assert conf.detail["parent"] == "/memories/cooking/long.md > # Loaves" and "retitle" in conf.action
    long = one(report, "over-long")
    assert long.path == "/memories/cooking/long.md"
    assert long.key == "over-long:/memories/cooking/long.md > # Loaves > ## Log"
    assert long.detail["heading_path"] == "# Loaves > ## Log" and long.detail["line"] == 6
    assert long.detail["chars"] > long.detail["limit"] == 3000
    order = kinds(report)
    assert order == sorted(order, key=KINDS.index)


def test_keys_stand_across_edits_that_leave_the_findings_be(tmp_path: Path) -> None:
    """An edit elsewhere, and one that moves a finding's lines, keep every key; fixing the
    finding removes it, and `introduced` names what a later edit added."""
    root = tmp_path / "m"
    clean_store(root)
    bob = (root / "people/bob.md").read_text()
    write(
        root,
        {
            "people/bob.md": bob
            + "see /memories/people/erin.md\n- alice | diet: keto (since 2020-01-01) [S9T9]\n"
        },
    )
    store = Store(root)
    before = health(store)
    assert set(kinds(before)) == {"dangling-ref", "stale-live"}
    alice = (root / "people/alice.md").read_text()
    write(
        root,
        {"people/alice.md": alice + "## Garden\nAlice grows tomatoes and basil on her balcony. [S8T1]\n"},
    )
    write(
        root,
        {"people/bob.md": (root / "people/bob.md").read_text().replace("# Bob\n", "# Bob\nBob, 41.\n\n")},
    )
    after = health(store)
    assert after.keys == before.keys
    assert [f.detail["line"] for f in after.findings if f.kind == "dangling-ref"] == [
        f.detail["line"] + 2 for f in before.findings if f.kind == "dangling-ref"
    ]
    write(root, {"people/bob.md": (root / "people/bob.md").read_text() + "see /memories/nowhere.md\n"})
    later = health(store)
    assert [f.detail["target"] for f in introduced(after, later)] == ["/memories/nowhere.md"]
    assert introduced(later, after) == []


def test_incremental_tree_is_tree_build_and_reuse_is_exact(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    write(root, {"people/setext.md": fm("setext", "d", "Title\n=====\nbody text here\n\nSub\n---\nmore\n")})
    store = Store(root)
    listing = health_cache.read_listing(store)
    cache = health_cache.HealthCache()
    parses, fresh = cache.refresh(listing)
    assert fresh == 5

    def shape(nodes: list[Node]) -> list[tuple[object, ...]]:
        return [(n.kind, n.name, n.depth, n.label, n.text, n.where, len(n.children)) for n in nodes]

    expected = build(listing.snapshot)
    for _ in range(2):  # the second assembly re-links the same cached subtrees
        got = health_cache.assemble(listing.snapshot, parses)
        assert shape(got.nodes) == shape(expected.nodes) and shape(got.units) == shape(expected.units)
        assert (got.sections, got.bytes, got.xrefs, got.files, got.dirs) == (
            expected.sections,
            expected.bytes,
            expected.xrefs,
            expected.files,
            expected.dirs,
        )
    texts = [u.text for u in expected.units] + ["", "a", "Ünïcode wörds, ÜNÏCODE"]
    mine, theirs = cache.vectorize(texts), taxonomy.vectorize(texts)
    assert mine is not None and theirs is not None
    assert np.array_equal(mine.indices, theirs.indices) and mine.data.tobytes() == theirs.data.tobytes()
    assert cache.vectorize(["a", "?"]) is None and taxonomy.vectorize(["a", "?"]) is None
    first = health(store)
    again = health(store)
    assert again.reused and again.findings == first.findings and again.reparsed == 0
    write(root, {"people/bob.md": (root / "people/bob.md").read_text() + "see /memories/gone.md\n"})
    edited = health(store)
    assert not edited.reused and edited.reparsed == 1
    fresh_report = health(store, incremental=False)
    assert [f.as_dict() for f in edited.findings] == [f.as_dict() for f in fresh_report.findings]
    assert fresh_report.reparsed == 5


def test_the_confusable_pair_follows_moved_lines_and_a_changed_label(tmp_path: Path) -> None:
    """B1's pair is kept between calls while the labels stand (health_cache.b1_pair): lines
    moved above it move its lines, a retitled heading recomputes it."""
    root = tmp_path / "m"
    content_store(root)
    store = Store(root)
    log = "/memories/cooking/long.md > # Loaves > ## Log"
    first = one(health(store), "confusable")
    long = root / "cooking/long.md"
    long.write_text(long.read_text().replace("# Loaves\n", "# Loaves\nRye and spelt.\n\n"))
    moved = one(health(store), "confusable")
    assert moved.key == first.key == f"confusable:{log}|{log} [2]"
    assert (moved.detail["a"]["line"], moved.detail["b"]["line"]) == (8, 129)
    long.write_text(long.read_text().replace("## Log\nTwo loaves", "## Neighbours\nTwo loaves"))
    assert "confusable" not in kinds(health(store))
    assert kinds(health(store)) == kinds(health(store, incremental=False))


def test_the_tool_is_read_only_and_only_in_manage_health(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    write(root, {"people/bob.md": (root / "people/bob.md").read_text() + "see /memories/gone.md\n"})
    store = open_store(root)
    with store.step("seed"):
        store.create("/memories/notes.md", fm("notes", "loose notes", "nothing yet\n"))
    before, head = snapshot(root), Journal(root).head()
    h = Harness(store, "manage-health", role="test")
    assert h.specs["health"].read_only and h.specs["health"].idempotent
    for args in (
        {},
        {"path": "/memories/people"},
        {"path": "/memories/people/bob.md"},
        {"path": "/memories/notes.md"},
    ):
        r = h.call("health", args)
        assert not r.is_error and r.meter.writes == 0, r.text
    assert snapshot(root) == before and Journal(root).head() == head
    r = h.call("health", {"path": "/memories/notes.md"})
    assert "no findings" in r.text and "1 more elsewhere in the store" in r.text
    assert h.call("health", {"path": "/memories/absent"}).text.startswith(
        "Error: /memories/absent does not exist"
    )
    for profile in ("manage", "search", "manage-hybrid", "shell"):
        try:
            other = Harness(store, profile)
        except MemdirError:  # a profile this install cannot serve (no sandbox, no embedder)
            continue
        assert "health" not in other.specs
        assert other.call("health", {}).is_error


def test_text_is_bounded_and_data_follows_its_schema(tmp_path: Path) -> None:
    root = tmp_path / "m"
    clean_store(root)
    refs = "".join(f"see /memories/gone-{i}.md\n" for i in range(130))
    write(root, {"people/bob.md": (root / "people/bob.md").read_text() + refs})
    h = Harness(open_store(root), "manage-health")
    r = h.call("health", {})
    # the references also make bob's '## Truck' over-long
    assert r.text.startswith(
        "health of /memories: 131 findings (130 dangling-ref, 1 over-long), most urgent first"
    )
    assert r.text.count("\n   do: ") == 20 and r.text.endswith(
        "(111 more not shown; fix these and call health again)"
    )
    assert len(r.text) < 8000
    assert (
        r.data is not None
        and r.data["total"] == 131
        and r.data["not_shown"] == 31
        and len(r.data["findings"]) == 100
    )
    jsonschema.Draft202012Validator(outputs.HEALTH).validate(r.data)
    assert list(outputs.HEALTH_DETAILS) == list(KINDS)


async def test_structured_findings_travel_through_mcp_and_validate(tmp_path: Path) -> None:
    """Every kind at once, validated by the SDK's client against the output schema."""
    root = tmp_path / "m"
    content_store(root)
    write(
        root,
        {
            "people/MEMORY.md": INDEX.format(d="People", t="People"),
            "people/bob.md": fm(
                "bob",
                "Bob",
                "# Bob\n- bob | job: cook (since 2020-01-01) [S9T8]\n"
                "- ~~bob | job: nurse~~ (2018-01-01 until 2021-01-01) [S9T7]\n"
                "- dave | pet: cat (since 2020-01-01) [S1T3]\n"
                "- ~~dave | pet: dog~~ (2019-01-01 until 2022-06-01) [S1T4]\n"
                "see /memories/people/carol.md\n",
            ),
            "cars/jobs.md": fm("jobs", "jobs", "# Jobs\n- bob | job: nurse (since 2018-01-01) [S9T7]\n"),
        },
    )
    h = Harness(open_store(root, guards=Guards(fanout_cap=5, core_budget=5)), "manage-health")
    local = h.call("health", {})
    assert local.data is not None
    assert list(dict.fromkeys(f["kind"] for f in local.data["findings"])) == list(KINDS), local.text
    jsonschema.Draft202012Validator(outputs.HEALTH).validate(local.data)
    async with Client(build_server(h)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["health"].output_schema == outputs.HEALTH
        assert (
            listed["health"].annotations is not None and listed["health"].annotations.read_only_hint is True
        )
        r = await client.call_tool("health", {})
        assert not r.is_error and r.structured_content == local.data
