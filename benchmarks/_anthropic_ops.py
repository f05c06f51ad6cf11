"""The commands both tools run: the timed sequence and the contract probes.

Commands are in the SDK's shape (`{"command": ..., "path": ...}`); the benchmark translates
them for memdir (view_range becomes start_line/end_line). Every probe says why the two
contracts differ there, and the tree comparison quotes that reason for each difference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def frontmatter_file(stem: str, body: str, description: str | None = None) -> str:
    return f"---\nname: {stem}\ndescription: {description or 'Benchmark note ' + stem}\n---\n{body}"


# -- the shared, timed sequence --------------------------------------------------------------


def timed_ops(
    files: list[str], texts: dict[str, str], reps: int
) -> list[tuple[str, Callable[[int], dict[str, Any]]]]:
    """(operation, rep -> command). Mutating ops take disjoint pools of files, one per rep."""
    plain = [f for f in files if f.count("/") >= 3]  # in a folder, not core memory
    pools = {
        op: plain[k * reps : (k + 1) * reps]
        for k, op in enumerate(("str_replace", "insert", "rename", "delete"))
    }
    if len(plain) < 4 * reps + 1:
        raise SystemExit(f"store too small for {reps} reps: need {4 * reps + 1} nested files")
    viewed = plain[-1]
    serial = {f: texts[f].split("Record key: ")[1].split("\n")[0] for f in plain[: 4 * reps]}

    def fm_lines(path: str) -> int:
        return texts[path].split("\n").index("---", 1) + 1

    return [
        ("view file", lambda i: {"command": "view", "path": viewed}),
        ("view range", lambda i: {"command": "view", "path": viewed, "view_range": [5, 15]}),
        ("view root", lambda i: {"command": "view", "path": "/memories"}),
        (
            "create",
            lambda i: {
                "command": "create",
                "path": f"/memories/bench-new/note-{i}.md",
                "file_text": frontmatter_file(
                    f"note-{i}", f"# Note {i}\n\n- bench | created: {i} [S1T{i}]\n"
                ),
            },
        ),
        (
            "str_replace",
            lambda i: {
                "command": "str_replace",
                "path": pools["str_replace"][i],
                "old_str": f"Record key: {serial[pools['str_replace'][i]]}",
                "new_str": f"Record key: {serial[pools['str_replace'][i]]} (edited)",
            },
        ),
        (
            "insert",
            lambda i: {
                "command": "insert",
                "path": pools["insert"][i],
                "insert_line": fm_lines(pools["insert"][i]),
                "insert_text": f"- bench | inserted: line {i} [S2T{i}]",
            },
        ),
        (
            "rename",
            lambda i: {
                "command": "rename",
                "old_path": pools["rename"][i],
                "new_path": "/memories/archive/" + pools["rename"][i].rsplit("/", 1)[1],
            },
        ),
        ("delete", lambda i: {"command": "delete", "path": pools["delete"][i]}),
    ]


# -- contract probes: one command each, where the two contracts are known to differ ----------

PROBE_BODY = "# Probe\n\nAlice likes tea.\n"
TRAILING_BLANK_WHY = (
    "the SDK's insert splits on newlines and drops only one empty tail element, so a file ending in a "
    "blank line loses it, wherever the insert lands; memdir keeps the rest of the file byte-identical"
)
PROBES: list[dict[str, Any]] = [
    {
        "name": "create without frontmatter",
        "why": "memdir requires name/description frontmatter on every created file; the SDK writes any text",
        "steps": [
            {"command": "create", "path": "/memories/probe/no-frontmatter.md", "file_text": "just text\n"}
        ],
    },
    {
        "name": "create with name != stem",
        "why": "memdir checks that the frontmatter name equals the file stem; the SDK does not read content",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/mismatch.md",
                "file_text": frontmatter_file("other", "x\n"),
            }
        ],
    },
    {
        "name": "create non-.md file",
        "why": "memdir's file tools work on .md files only; the SDK writes any name",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/notes.txt",
                "file_text": frontmatter_file("notes", "x\n"),
            }
        ],
    },
    {
        "name": "create hidden file",
        "why": "memdir refuses hidden segments (they are not memory; its derived state lives in .memdir/); "
        "the SDK creates the file and then leaves it out of its own directory listings",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/.hidden.md",
                "file_text": frontmatter_file("hidden", "x\n"),
            },
            {"command": "view", "path": "/memories/probe/.hidden.md"},
        ],
    },
    {
        "name": "/memoriesX prefix",
        "why": "the SDK checks startswith('/memories') with no separator, so '/memoriesX/a.md' is accepted "
        "and "
        "lands in memories/X/a.md; memdir requires '/memories' or '/memories/...'",
        "steps": [
            {
                "command": "create",
                "path": "/memoriesX/escape.md",
                "file_text": frontmatter_file("escape", "x\n"),
            },
            {"command": "view", "path": "/memoriesX/escape.md"},
        ],
    },
    {
        "name": "'..' inside the path",
        "why": "the SDK resolves '..' and accepts it while the result stays under the root; memdir refuses "
        "'..' in any spelling rather than normalizing",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/../dotdot.md",
                "file_text": frontmatter_file("dotdot", "x\n"),
            }
        ],
    },
    {
        "name": "insert inside frontmatter",
        "why": "memdir's insert refuses lines inside the frontmatter (edit fields with str_replace); the "
        "SDK inserts "
        "anywhere in 0..n",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/fm-insert.md",
                "file_text": frontmatter_file("fm-insert", PROBE_BODY),
            },
            {
                "command": "insert",
                "path": "/memories/probe/fm-insert.md",
                "insert_line": 1,
                "insert_text": "- a fact",
            },
        ],
    },
    {
        "name": "insert text ending in blank lines",
        "why": "the SDK strips every trailing newline of insert_text; memdir adds one only if missing, so "
        "'x\\n\\n' inserts a blank line too",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/blank.md",
                "file_text": frontmatter_file("blank", PROBE_BODY),
            },
            {
                "command": "insert",
                "path": "/memories/probe/blank.md",
                "insert_line": 4,
                "insert_text": "- a fact\n\n",
            },
        ],
    },
    {
        "name": "insert into a file without a final newline",
        "why": "the SDK always ends the rewritten file with a newline; memdir keeps the file's missing "
        "final newline",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/no-eol.md",
                "file_text": frontmatter_file("no-eol", "# T\nlast line"),
            },
            {
                "command": "insert",
                "path": "/memories/probe/no-eol.md",
                "insert_line": 4,
                "insert_text": "- a fact",
            },
        ],
    },
    {
        "name": "insert into a file ending in a blank line",
        "why": TRAILING_BLANK_WHY,
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/tail.md",
                "file_text": frontmatter_file("tail", "# T\n\n## Later\n\n"),
            },
            {
                "command": "insert",
                "path": "/memories/probe/tail.md",
                "insert_line": 4,
                "insert_text": "- a fact",
            },
        ],
    },
    {
        "name": "str_replace text found in frontmatter and body",
        "why": "memdir matches the body first and falls back to the frontmatter, so a body-unique string "
        "is edited; "
        "the SDK counts the whole file and refuses two occurrences",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/both.md",
                "file_text": frontmatter_file("both", PROBE_BODY, "Alice likes tea"),
            },
            {
                "command": "str_replace",
                "path": "/memories/probe/both.md",
                "old_str": "likes tea",
                "new_str": "likes coffee",
            },
        ],
    },
    {
        "name": "str_replace that breaks the frontmatter",
        "why": "memdir re-validates the frontmatter after an edit and refuses new problems; the SDK writes "
        "it",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/break.md",
                "file_text": frontmatter_file("break", PROBE_BODY),
            },
            {
                "command": "str_replace",
                "path": "/memories/probe/break.md",
                "old_str": "name: break",
                "new_str": "title: break",
            },
        ],
    },
    {
        "name": "str_replace with overlapping occurrences",
        "why": "memdir counts overlapping matches ('aa' occurs twice in 'aaa') and refuses as ambiguous; "
        "the SDK's "
        "str.count sees one and replaces the first",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/overlap.md",
                "file_text": frontmatter_file("overlap", "ratio aaa\n"),
            },
            {"command": "str_replace", "path": "/memories/probe/overlap.md", "old_str": "aa", "new_str": "b"},
        ],
    },
    {
        "name": "rename a file to a non-.md path",
        "why": "memdir keeps the .md extension on files; the SDK moves to any name",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/ext.md",
                "file_text": frontmatter_file("ext", "x\n"),
            },
            {
                "command": "rename",
                "old_path": "/memories/probe/ext.md",
                "new_path": "/memories/probe/ext.txt",
            },
        ],
    },
    {
        "name": "view_range past the end",
        "why": "memdir refuses an out-of-range end_line and says the valid range; the SDK clamps silently",
        "steps": [{"command": "view", "path": "/memories/probe/blank.md", "view_range": [2, 999]}],
    },
    {
        "name": "agreement: create over an existing file",
        "why": "both refuse",
        "steps": [
            {
                "command": "create",
                "path": "/memories/probe/blank.md",
                "file_text": frontmatter_file("blank", "x\n"),
            }
        ],
    },
    {
        "name": "agreement: delete the root",
        "why": "both refuse",
        "steps": [{"command": "delete", "path": "/memories"}],
    },
    {
        "name": "agreement: empty old_str",
        "why": "both refuse (the SDK as 'multiple occurrences')",
        "steps": [
            {"command": "str_replace", "path": "/memories/probe/blank.md", "old_str": "", "new_str": "x"}
        ],
    },
]
