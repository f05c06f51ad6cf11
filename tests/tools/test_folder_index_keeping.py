"""The tools keep the Agent Memory convention (issue 34, item 5): with the product's index
keeping (`Harness(keep_indexes=True)`: the API, `memdir tool`, the MCP server), a write that
makes a memory directory makes its `MEMORY.md`, rename and delete keep the indexes true, and
`validate` passes after every call; the study's configuration (the default) makes none; a
refused write leaves every byte as it was."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from tests import landing_kills as lk

from memdir.api.memory import Memory
from memdir.cli.main import cli
from memdir.store import spec
from memdir.store.journal import Journal
from memdir.store.paths import STATE_DIR
from memdir.store.store import Store
from memdir.tools.guards import Guards
from memdir.tools.profiles import Harness
from memdir.tools.sandbox import _probe
from memdir.tools.wiring import open_store


def note(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n{body}"


def files_of(root: Path) -> dict[str, bytes]:
    """Every entry of the memory tree (folders as None), derived state left out."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == STATE_DIR:
            continue
        out[str(rel) + ("/" if p.is_dir() else "")] = b"" if p.is_dir() else p.read_bytes()
    return out


def violations(store: Store) -> list[tuple[str, str]]:
    return [(v.path, v.rule) for v in spec.validate(store).violations]


@pytest.fixture
def kept(tmp_path: Path) -> Harness:
    return Harness(open_store(tmp_path / "mem", create=True, init=True), "manage", keep_indexes=True)


def ok(h: Harness, name: str, **args: object) -> str:
    result = h.call(name, dict(args))
    assert not result.is_error, result.text
    return result.text


def test_a_create_into_a_new_folder_makes_its_index_and_says_so(kept: Harness) -> None:
    said = ok(
        kept, "create", path="/memories/places/europe/lisbon.md", file_text=note("lisbon", "Trips to Lisbon")
    )
    assert "made /memories/places/europe/MEMORY.md" in said and "made /memories/places/MEMORY.md" in said
    assert violations(kept.store) == []
    europe = kept.store.read_text("/memories/places/europe/MEMORY.md")
    assert "- [lisbon.md](lisbon.md): Trips to Lisbon" in europe.splitlines()
    assert "- [europe/](europe/MEMORY.md): folder" in kept.store.read_text("/memories/places/MEMORY.md")
    root_index = kept.store.read_text("/memories/MEMORY.md")
    assert root_index == spec.INIT_INDEX  # core memory: the core block lists the root's folders itself
    # The next file in that folder is listed in its index; a changed description follows it there.
    said = ok(kept, "create", path="/memories/places/europe/porto.md", file_text=note("porto", "Porto"))
    assert "listed porto.md in /memories/places/europe/MEMORY.md" in said
    ok(
        kept,
        "str_replace",
        path="/memories/places/europe/porto.md",
        old_str="description: Porto",
        new_str="description: Porto in May",
    )
    assert "- [porto.md](porto.md): Porto in May" in kept.store.read_text("/memories/places/europe/MEMORY.md")


def test_the_file_and_its_index_are_one_journaled_step(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "mem")
    assert not mem.call(
        "create", {"path": "/memories/places/lisbon.md", "file_text": note("lisbon", "Lisbon")}
    ).is_error
    last = mem.history()[-1]
    assert last.tool == "create"
    assert {c.path for c in last.changes} == {"/memories/places/lisbon.md", "/memories/places/MEMORY.md"}
    assert not (tmp_path / "mem" / STATE_DIR / "landing.intent").exists()  # the landing's record is gone
    assert violations(mem.store) == []


def test_rename_moves_entries_and_delete_removes_them(kept: Harness) -> None:
    ok(
        kept,
        "create",
        path="/memories/people/MEMORY.md",
        file_text="---\ndescription: People\n---\n# People\n\nPeople I know, one file each.\n\n"
        "- Bob: see /memories/people/bob.md\n",
    )
    ok(kept, "create", path="/memories/people/bob.md", file_text=note("bob", "Bob, a colleague"))
    ok(kept, "create", path="/memories/people/alice.md", file_text=note("alice", "Alice, my sister"))
    people = kept.store.read_text("/memories/people/MEMORY.md").splitlines()
    assert (
        "- Bob: see /memories/people/bob.md" in people
        and people.count("- [alice.md](alice.md): Alice, my sister") == 1
    )
    assert not any("[bob.md]" in ln for ln in people)  # already named (in full): not listed twice
    # A rename within the folder retargets the line in place, the writer's own words kept.
    said = ok(kept, "rename", old_path="/memories/people/bob.md", new_path="/memories/people/robert.md")
    assert "retargeted the entry of bob.md in /memories/people/MEMORY.md" in said
    assert "- Bob: see /memories/people/robert.md" in kept.store.read_text("/memories/people/MEMORY.md")
    # A move to another folder moves the line: gone here, there in the new folder's index.
    said = ok(kept, "rename", old_path="/memories/people/robert.md", new_path="/memories/work/robert.md")
    assert "made /memories/work/MEMORY.md" in said
    assert "robert" not in kept.store.read_text("/memories/people/MEMORY.md")
    assert "- [robert.md](robert.md): Bob, a colleague" in kept.store.read_text("/memories/work/MEMORY.md")
    assert violations(kept.store) == []
    # A folder moved deeper: its index's full paths and heading follow it; the new parent lists it.
    ok(kept, "rename", old_path="/memories/work", new_path="/memories/life/work")
    work = kept.store.read_text("/memories/life/work/MEMORY.md")
    assert "/memories/work" not in work and "# work" in work
    assert "- [work/](work/MEMORY.md): folder" in kept.store.read_text("/memories/life/MEMORY.md")
    assert violations(kept.store) == []
    # Deleting a folder's last file removes its bare index and the folder, upwards.
    said = ok(kept, "delete", path="/memories/life/work/robert.md")
    assert (
        "removed the empty folder /memories/life/work" in said
        and "removed the empty folder /memories/life" in said
    )
    assert not kept.store.exists("/memories/life")
    # An index a person wrote more in is kept with its folder.
    said = ok(kept, "delete", path="/memories/people/alice.md")
    assert "removed the entry of alice.md from /memories/people/MEMORY.md" in said
    people_now = kept.store.read_text("/memories/people/MEMORY.md")
    assert "alice" not in people_now and "People I know, one file each." in people_now
    assert violations(kept.store) == []


def test_a_needed_index_is_not_deleted(kept: Harness) -> None:
    ok(kept, "create", path="/memories/places/lisbon.md", file_text=note("lisbon", "Lisbon"))
    before = files_of(kept.store.root)
    for name, args in [
        ("delete", {"path": "/memories/places/MEMORY.md"}),
        ("rename", {"old_path": "/memories/places/MEMORY.md", "new_path": "/memories/other/MEMORY.md"}),
    ]:
        result = kept.call(name, args)
        assert result.is_error and "a memory directory, which needs one" in result.text
    assert files_of(kept.store.root) == before


def test_a_refused_write_leaves_every_byte_and_no_step(tmp_path: Path) -> None:
    # A fanout cap of 1 admits the new folder's index, then refuses the file beside it: the
    # index already written must go again, with the folder it made.
    store = open_store(tmp_path / "mem", create=True, init=True, guards=Guards(fanout_cap=1))
    h = Harness(store, "manage", keep_indexes=True)
    mem = Memory(tmp_path / "mem")
    steps = len(mem.history())
    before = files_of(store.root)
    result = h.call("create", {"path": "/memories/places/lisbon.md", "file_text": note("lisbon", "Lisbon")})
    assert result.is_error and "refused" in result.text
    assert files_of(store.root) == before
    assert len(mem.history()) == steps and h.meter.writes == 0
    assert not (store.root / STATE_DIR / "landing.intent").exists()


def test_the_study_configuration_makes_no_index(tmp_path: Path) -> None:
    h = Harness(open_store(tmp_path / "mem", create=True, init=True), "manage")  # the study's default
    said = ok(h, "create", path="/memories/places/lisbon.md", file_text=note("lisbon", "Lisbon"))
    assert "Indexes" not in said and not h.store.exists("/memories/places/MEMORY.md")
    assert violations(h.store) == [("/memories/places", "dir-index")]  # the paper's stores: none


def test_the_cli_tool_command_keeps_indexes(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    assert CliRunner().invoke(cli, ["init", str(root)]).exit_code == 0
    args = json.dumps({"path": "/memories/places/lisbon.md", "file_text": note("lisbon", "Lisbon")})
    out = CliRunner().invoke(cli, ["tool", str(root), "create", args])
    assert out.exit_code == 0, out.output
    assert "made /memories/places/MEMORY.md" in out.output
    assert violations(Store(root)) == []


async def test_over_the_real_mcp_client_validate_stays_clean(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    spec.init(open_store(root, create=True))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memdir", "serve", str(root), "--profile", "manage"],
        env=env,
    )
    async with Client(params) as client:
        r = await client.call_tool(
            "create", {"path": "/memories/places/lisbon.md", "file_text": note("lisbon", "Lisbon")}
        )
        assert not r.is_error and "made /memories/places/MEMORY.md" in "".join(c.text for c in r.content)
        assert violations(Store(root)) == []
        r = await client.call_tool(
            "rename", {"old_path": "/memories/places/lisbon.md", "new_path": "/memories/trips/lisbon.md"}
        )
        assert not r.is_error
        assert violations(Store(root)) == []
        assert not (root / "places").exists()  # left with nothing but its bare index: gone


def test_validate_passes_after_any_sequence_of_calls(kept: Harness) -> None:
    """Random create/str_replace/insert/rename/delete calls on a valid store (a fixed seed):
    the store is valid after each one, whether the call succeeded or was refused."""
    rng = random.Random(34)
    folders = ["/memories", "/memories/a", "/memories/a/b", "/memories/c", "/memories/c/d/e"]
    names = ["x", "y", "z", "w"]

    def some_file() -> str:
        return f"{rng.choice(folders)}/{rng.choice([*names, 'MEMORY'])}.md"

    def some_path() -> str:
        return rng.choice([some_file(), rng.choice(folders[1:])])

    for _ in range(150):
        op = rng.choice(["create", "create", "str_replace", "insert", "rename", "delete"])
        if op == "create":
            path = some_file()
            stem = path.rsplit("/", 1)[1][:-3]
            text = (
                "---\ndescription: an index\n---\n# i\n" if stem == "MEMORY" else note(stem, f"about {stem}")
            )
            args: dict[str, object] = {"path": path, "file_text": text}
        elif op == "str_replace":
            args = {"path": some_file(), "old_str": "description: about", "new_str": "description: all about"}
        elif op == "insert":
            args = {"path": some_file(), "insert_line": 4, "insert_text": "- a fact [S1T1]"}
        elif op == "rename":
            old = some_path()
            new = some_file() if old.endswith(".md") else f"{rng.choice(folders)}/{rng.choice(['f', 'g'])}"
            args = {"old_path": old, "new_path": new}
        else:
            args = {"path": some_path()}
        result = kept.call(op, args)
        assert violations(kept.store) == [], (op, args, result.text)


@pytest.mark.skipif(_probe() is not None, reason=f"no confining sandbox here: {_probe()}")
def test_the_shell_keeps_indexes_after_its_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path / "mem", create=True, init=True)
    kept_shell = Harness(store, "shell", keep_indexes=True)
    lisbon = "printf -- '---\\nname: lisbon\\ndescription: Lisbon\\n---\\nhi\\n'"
    said = ok(kept_shell, "bash", command=f"mkdir -p places/europe && {lisbon} > places/europe/lisbon.md")
    assert "[indexes kept: made /memories/places/europe/MEMORY.md; made /memories/places/MEMORY.md]" in said
    assert violations(store) == []
    # The command removed an index and moved the note up: the folder above lists it, and the
    # folder left with no notes is no longer listed.
    ok(kept_shell, "bash", command="rm places/europe/MEMORY.md && mv places/europe/lisbon.md places/")
    places = store.read_text("/memories/places/MEMORY.md")
    assert "- [lisbon.md](lisbon.md): Lisbon" in places and "europe" not in places
    assert violations(store) == []
    # The study's Shell profile writes only what the command writes.
    ok(Harness(store, "shell"), "bash", command=f"mkdir x && {lisbon.replace('lisbon', 'a')} > x/a.md")
    assert violations(store) == [("/memories/x", "dir-index")]


# -- a kill at any write point (the audit-hook kills of tests/landing_kills.py) ----------------
LISBON = {"path": "/memories/places/europe/lisbon.md", "file_text": note("lisbon", "Lisbon")}


def child(root: str) -> None:
    """A create into a new folder with folder index keeping, killed at write point $KILL_AT."""
    lk._counter.kill_at = int(os.environ.get(lk.KILL_AT, "0"))
    sys.addaudithook(lk._hook)
    store = open_store(root)
    store.observers.append(lk._Arm(("create",)))
    result = Harness(store, "manage", keep_indexes=True).call("create", LISBON)
    assert not result.is_error, result.text
    lk.settle(store)
    Path(os.environ[lk.POINTS_FILE]).write_text(f"{lk._counter.seen}\n")


def _run(root: Path, kill_at: int, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(lk.REPO / "src"), str(lk.REPO)]),
        lk.KILL_AT: str(kill_at),
        lk.POINTS_FILE: str(tmp / "points"),
    }
    code = "import sys; from tests.tools.test_folder_index_keeping import child; child(sys.argv[1])"
    return subprocess.run([sys.executable, "-c", code, str(root)], env=env, capture_output=True)


@pytest.mark.slow
def test_a_create_killed_at_any_write_point_leaves_a_valid_store_old_or_new(tmp_path: Path) -> None:
    template = tmp_path / "template"
    spec.init(open_store(template, create=True))
    before = lk.plain(template)
    probe = tmp_path / "probe"
    shutil.copytree(template, probe, symlinks=True)
    assert _run(probe, 0, tmp_path).returncode == 0
    after = lk.plain(probe)
    assert set(after) - set(before) == {
        "places/MEMORY.md",
        "places/europe/MEMORY.md",
        "places/europe/lisbon.md",
    }
    points = int((tmp_path / "points").read_text())
    assert points >= 6  # the intent record, two folders, two indexes, the file, the journal
    seen: set[str] = set()
    for n in range(1, points + 1):
        root = tmp_path / f"kill{n}"
        shutil.copytree(template, root, symlinks=True)
        assert _run(root, n, tmp_path).returncode == -signal.SIGKILL
        steps = len(Journal(root).steps())
        nxt = Harness(open_store(root), "manage", keep_indexes=True)  # the next writer
        ok(nxt, "create", path="/memories/later.md", file_text=note("later", "A later note"))
        lk.settle(nxt.store)
        now = lk.plain(root)
        now.pop("later.md")
        state = "old" if now == before else "new" if now == after else "half"
        assert state != "half", (n, sorted(now))
        seen.add(state)
        assert violations(nxt.store) == []
        tools = [s.tool for s in Journal(root).steps()[steps - 1 :]]
        assert "recovered" not in tools, (n, tools)
    assert seen == {"old", "new"}
