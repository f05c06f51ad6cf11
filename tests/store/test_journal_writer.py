"""The journal's in-process writer (libgit2): real git history, several processes, the
whole-tree check on its own thread, refs packed by git, links never read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

from memdir.agents.landing import git_blob
from memdir.store.journal import Journal, JournalObserver
from memdir.store.store import Store
from memdir.tools.profiles import Harness
from memdir.tools.wiring import open_store


def md(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: about {name}\n---\n{body}\n"


def observer_of(store: Store) -> JournalObserver:
    return next(o for o in store.observers if isinstance(o, JournalObserver))


def git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    cmd = ["git", "--git-dir", str(root / ".memdir" / "journal.git"), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout


def test_steps_are_plain_git_commits_git_itself_reads(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage", role="r", task=3)
    assert not h.call("create", {"path": "/memories/a/x.md", "file_text": md("x", "one")}).is_error
    assert not h.call("rename", {"old_path": "/memories/a/x.md", "new_path": "/memories/b/x.md"}).is_error
    # git itself does not commit what is still logged, as memdir's readers do: let it land.
    assert observer_of(store).settled()
    log = git(root, "log", "--format=%s").split("\n")[:2]
    assert log == ["rename: 1 change", "create: 1 change"]
    assert git(root, "rev-parse", "HEAD").strip() == Journal(root).head()
    assert git(root, "ls-tree", "-r", "--name-only", "HEAD").split() == ["b/x.md"]
    assert "Memdir-Task: 3" in git(root, "log", "-1", "--format=%B")
    subprocess.run(
        ["git", "--git-dir", str(root / ".memdir" / "journal.git"), "fsck", "--strict"], check=True
    )
    assert Journal(root).steps()[-1].meta == {"role": "r", "task": "3"}


def test_several_processes_append_every_step(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    Harness(open_store(root, create=True), "manage").call(
        "create", {"path": "/memories/seed.md", "file_text": md("seed", "s")}
    )
    code = (
        "import sys\n"
        "from memdir.tools.profiles import Harness\n"
        "from memdir.tools.wiring import open_store\n"
        "h = Harness(open_store(sys.argv[1]), 'manage', role=sys.argv[2])\n"
        "for i in range(15):\n"
        "    n = f'{sys.argv[2]}-{i}'\n"
        "    t = f'---\\nname: {n}\\ndescription: d\\n---\\nbody {i}\\n'\n"
        "    assert not h.call('create', {'path': f'/memories/{n}.md', 'file_text': t}).is_error\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root), f"w{w}"], env=env) for w in range(3)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    steps = Journal(root).steps()
    creates = [s for s in steps if s.tool == "create"]
    assert len(creates) == 1 + 45 and not any(s.tool == "recovered" for s in steps)
    for w in range(3):  # each writer's steps in its own order
        mine = [s.changes[0].path for s in creates if s.meta.get("role") == f"w{w}"]
        assert mine == [f"/memories/w{w}-{i}.md" for i in range(15)]
    tree = Journal(root).files_at(Journal(root).head() or "")
    assert sorted(tree) == sorted(p.name for p in root.glob("*.md"))


def test_a_large_or_uncached_store_checks_on_its_own_thread(tmp_path: Path) -> None:
    """Without a stat cache (or above SYNC_CACHE_BYTES) the first step's whole-tree check runs
    beside the step: the step commits only its own path, and the hand edit lands after it as
    a recovered step."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": md("a", "one")}).is_error
    (root / ".memdir" / "journal.git" / "memdir-stat-cache").unlink()
    (root / "hand.md").write_text(md("hand", "typed by hand"))
    (root / "a.md").write_text(md("a", "one, edited by hand"))
    store = open_store(root)
    n = len(Journal(root).steps())
    assert (
        not Harness(store, "manage")
        .call("create", {"path": "/memories/b.md", "file_text": md("b", "two")})
        .is_error
    )
    assert observer_of(store).settled(60)
    steps = Journal(root).steps()[n:]
    assert [s.tool for s in steps] == ["create", "recovered"]
    assert "outside the tools" in steps[1].meta["recovered"]
    assert sorted((c.kind, c.path) for c in steps[1].changes) == [
        ("create", "/memories/hand.md"),
        ("modify", "/memories/a.md"),
    ]
    assert sorted(Journal(root).files_at(steps[0].commit)) == ["a.md", "b.md"]
    assert sorted(Journal(root).files_at(steps[1].commit)) == ["a.md", "b.md", "hand.md"]
    assert (root / ".memdir" / "journal.git" / "memdir-stat-cache").is_file()  # kept for next time


def test_the_stat_cache_sees_a_same_size_edit(tmp_path: Path) -> None:
    """A hand edit that keeps the size still changes the mtime, so the check reads the file."""
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": md("a", "aaaa")}).is_error
    old = (root / "a.md").stat().st_mtime_ns - 5_000_000_000
    os.utime(root / "a.md", ns=(old, old))  # an old file: trusted by the next check's cache
    assert (
        not Harness(open_store(root), "manage")
        .call("create", {"path": "/memories/b.md", "file_text": md("b", "b")})
        .is_error
    )
    (root / "a.md").write_text(md("a", "bbbb"))  # same size, new mtime
    assert not Harness(open_store(root), "manage").call("delete", {"path": "/memories/b.md"}).is_error
    head = Journal(root).head() or ""
    assert git(root, "show", f"{head}:a.md") == md("a", "bbbb")


def test_refs_packed_by_git_and_gc_leave_the_journal_working(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    h = Harness(open_store(root, create=True), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": md("a", "one")}).is_error
    git(root, "gc", "--quiet")  # packs objects and refs: the loose branch ref is gone
    assert not (root / ".memdir" / "journal.git" / "refs" / "heads" / "master").exists()
    assert not h.call("create", {"path": "/memories/b.md", "file_text": md("b", "two")}).is_error
    steps = Journal(root).steps()
    assert [s.tool for s in steps][-2:] == ["create", "create"]
    assert sorted(Journal(root).files_at(steps[-1].commit)) == ["a.md", "b.md"]
    git(root, "fsck")


def test_links_and_hard_links_are_never_read(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET-BYTES-42\n")
    h = Harness(open_store(root, create=True), "manage")
    assert not h.call("create", {"path": "/memories/a.md", "file_text": md("a", "one")}).is_error
    os.link(secret, root / "shared.md")
    (root / "sym.md").symlink_to(secret)
    assert not Harness(open_store(root), "manage").call("delete", {"path": "/memories/a.md"}).is_error
    step = Journal(root).steps()[-1]
    assert Journal(root).files_at(step.commit) == {}
    assert sorted(u.path for u in step.skipped) == ["/memories/shared.md", "/memories/sym.md"]
    assert "SECRET-BYTES-42" not in git(root, "log", "-p", "--all")


def test_a_file_and_a_folder_trading_one_name(tmp_path: Path) -> None:
    """`a.md` the file becomes `a.md/` the folder and back, in one step each: the snapshot
    follows, with no empty folder and no entry left of the old kind."""
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    with store.step("create"):
        store.create("/memories/n/a.md", md("a", "file"))
    with store.step("swap"):
        store.delete("/memories/n/a.md")
        store.create("/memories/n/a.md/x.md", md("x", "inside"))
    j = Journal(root)
    assert j.files_at(j.head() or "") == {"n/a.md/x.md": j.files_at(j.head() or "")["n/a.md/x.md"]}
    with store.step("swap back"):
        store.delete("/memories/n/a.md")
        store.create("/memories/n/a.md", md("a", "file again"))
    assert sorted(j.files_at(j.head() or "")) == ["n/a.md"]
    with store.step("delete"):
        store.delete("/memories/n/a.md")
    assert j.files_at(j.head() or "") == {}
    assert [s.tool for s in j.steps()] == ["baseline", "create", "swap", "swap back", "delete"]


def test_the_baseline_keeps_every_name_and_reads_no_link(tmp_path: Path) -> None:
    """Step 0 is written by `git fast-import` from bytes memdir read itself: names
    with spaces, quotes, backslashes, tabs, newlines or accents arrive unchanged; a hard link
    and a symlink are left out and named."""

    root = tmp_path / "mem"
    (root / "sub dir").mkdir(parents=True)
    names = ["a b.md", 'q"x.md', "back\\slash.md", "tab\there.md", "nl\nx.md", "ünï.md", "sub dir/deep.md"]
    for i, name in enumerate(names):
        (root / name).write_text(f"file {i}\n")
    secret = tmp_path / "secret.md"
    secret.write_text("SECRET-BYTES-42\n")
    os.link(secret, root / "shared.md")
    (root / "sym.md").symlink_to(secret)
    store = open_store(root)
    assert (
        not Harness(store, "manage")
        .call("create", {"path": "/memories/new.md", "file_text": md("new", "n")})
        .is_error
    )
    j = Journal(root)
    steps = j.steps()
    assert [s.tool for s in steps] == ["baseline", "create"]
    snap = j.files_at(steps[0].commit)
    assert snap == {n: git_blob(f"file {i}\n".encode()) for i, n in enumerate(names)}
    assert sorted(u.path for u in steps[0].skipped) == ["/memories/shared.md", "/memories/sym.md"]
    assert "SECRET-BYTES-42" not in git(root, "log", "-p", "--all")
    # The stat cache the baseline kept lets the next process's check skip every old file.
    assert not Harness(open_store(root), "manage").call("delete", {"path": "/memories/new.md"}).is_error
    assert sorted(j.files_at(j.head() or "")) == sorted(names)


def test_a_closed_journal_lets_go_of_its_files_and_reopens_on_the_next_step(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    store = open_store(root, create=True)
    h = Harness(store, "manage")
    for i in range(3):
        assert not h.call("create", {"path": f"/memories/n{i}.md", "file_text": md(f"n{i}", "x")}).is_error
    git(root, "gc", "-q")  # a pack, which libgit2 maps and keeps open
    assert not h.call("create", {"path": "/memories/p.md", "file_text": md("p", "packed")}).is_error
    journal_dir = str(root / ".memdir" / "journal.git")

    def held() -> int:
        fds = Path(f"/proc/{os.getpid()}/fd")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd).startswith(journal_dir))

    assert held() > 0
    observer_of(store).close()
    assert held() == 0
    assert not h.call("create", {"path": "/memories/q.md", "file_text": md("q", "after")}).is_error
    assert [s.tool for s in Journal(root).steps()][-2:] == ["create", "create"]
    assert "q.md" in git(root, "ls-tree", "--name-only", "HEAD")


def test_two_stores_on_one_root_in_one_process_commit_in_call_order(tmp_path: Path) -> None:
    """Two stores, one step log: both append under the writer lock, and the log is committed
    in its order, so the history is the order of the calls."""
    root = tmp_path / "mem"
    first = Harness(open_store(root, create=True), "manage", role="one")
    second = Harness(open_store(root), "manage", role="two")
    order = []
    for i in range(12):
        h = first if i % 2 == 0 else second
        name = f"n{i}"
        assert not h.call("create", {"path": f"/memories/{name}.md", "file_text": md(name, "x")}).is_error
        assert not h.call(
            "str_replace", {"path": f"/memories/{name}.md", "old_str": "x", "new_str": f"edit {i}"}
        ).is_error
        order += [("create", h.meta["role"], name), ("str_replace", h.meta["role"], name)]
    steps = Journal(root).steps()[1:]
    assert [(s.tool, s.meta["role"], s.changes[0].path[10:-3]) for s in steps] == order
    tree = Journal(root).files_at(Journal(root).head() or "")
    assert tree == {p.name: git_blob(p.read_bytes()) for p in root.glob("*.md")}
