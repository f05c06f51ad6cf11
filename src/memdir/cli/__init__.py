"""The `memdir` command: thin click commands over the library, nothing decided here.

`main.py` lists the topic modules (`COMMAND_MODULES`), then adds what plugins register
(`memdir/plugins.py`: e.g. `memdir study`, or the extra that installs it); a
topic module is imported only when one of its commands runs (`topics.py`), so `check` and
`stats` load no agents, libgit2 or tantivy. Shared option sets, each defined once:
`root_opts.py` (ROOT first, `--root` accepted as the same thing), `guard_opts.py` (the
operator's guards, wherever a store is opened for writing), `model_opts.py` (`--base-url`,
`--tool-protocol`, `--tool-set`). The topics: `store_cmds.py`, `serve_cmd.py`,
`mcp_config_cmd.py` (the snippet each MCP client expects), `demo_cmd.py`, `agent_cmds.py`
(ingest, ask), `adopt_cmd.py`, `health_cmds.py`, `consolidate_cmd.py` (consolidate, revert),
`search_cmds.py`, `token_cmd.py` (tokens named by fingerprints of the stored hashes, never
shown again), `local_cmd.py` (`local-model install|status|serve`), `ui_cmd.py`.
"""
