"""The harness: the tools a role (or an agent builder, or an MCP client) calls on a store.

A *profile* is the tools one role gets (`profiles.PROFILES`); a *tool set* pairs a build and a
search profile (`TOOL_SETS`, `--tool-set`, `tool_set` in run manifests and summaries; memdir
adds `center-hybrid`); a `Harness` serves one profile over one store and is the one entry point
for calls. A tool error (`ToolError`) is text for the model saying what to do; every check runs
before the single atomic write, so a failed call leaves the store byte-identical.

- `base.py`: the `@tool` decorator (one definition per tool, its schema from the signature;
  title, annotations, extension parameters left out of the base schemas, output schema),
  `ToolContext`, `Meter`, `run_tool` (a `ToolResult`: text plus structured `data`);
  `outputs.py` the structured results' JSON schemas; `schemas.py` the OpenAI, Anthropic and MCP
  renderings (memdir's roles get the base schemas, `agents/loop.tool_infos`).
- The tools: `view.py`; `files.py` (create, str_replace, insert, delete, rename) with
  `preconditions.py` (`expected_sha256`, checked inside the write step); `grep.py` (ripgrep with
  a watchdog, a `regex`-with-timeout fallback); `read.py` (toc, section_read); `search.py`
  (bm25_full_search, bm25_chunk_retrieve; memdir's section_search and hybrid_chunk_retrieve,
  which need the `embed` extra); `health.py` (the store's findings; opt-in `manage-health`
  profile only); `shell.py` + `sandbox.py` (bash in bubblewrap, refused where no confining
  sandbox exists); `text.py` line arithmetic.
- `guards.py`: the operator's guards as a `GuardedStore` (core budget, fanout cap, fact
  preservation, one live value per keyed fact, the skill setting's outcome gate).
- `wiring.py`: `open_store(root, index=, journal=, guards=)`, the one place a store is built
  with its views and guards (CLI, MCP, API and plugins all use it).
- `folder_index_keeping.py`: `keep_indexes`, the product's switch (API, `memdir tool`, MCP, the
  Anthropic drop-in; roles keep the base contract): a write lands with the folder indexes it
  needs, in one step (docs/tools.md); `references.py`: with it, a rename also rewrites the `see
  /memories/...` references to what it moved, under the same intent record.
"""
