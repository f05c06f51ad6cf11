"""`memdir ui`: a read-only web page over a store, its health and its history (docs/ui.md).

A thin outer layer like `cli`: every read goes through memdir's own APIs (the `Store`, the
analytics, the journal, the Memory API's search), so paths are confined exactly as the tools
confine them, and nothing here writes a memory file.

Served on 127.0.0.1 only (`server.py`; Starlette, Jinja2 with autoescaping, a little plain JS,
no remote assets). `app.py` holds the routes and the guards every response passes; the pages
are `views_store.py` (start page with the core gauge of `core.py`, the lazy tree of
`listing.py`, a file rendered by `render.py` with raw HTML off, search), `views_health.py`,
`views_history.py` (steps, diffs, the store as it was via `snapshots.py`, growth plots,
`diff --facts` between steps); a plugin's pages join them (`memdir/plugins.py`). `auth.py`
and `sessions.py`: tenants' bearer tokens as `mcp/tenants.py` hashes them, and a browser's
random session id (never the token); `scratch.py`: the bounded private folder, removed on
SIGTERM; `params.py`: numbers in URLs bounded; `urls.py`: every link built in one place. Every
page is bounded by what it shows: a file page, live or at a past step, is a page of
`store/window.py`, a folder 500 entries, the history 100 rows.
"""
