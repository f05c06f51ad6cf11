"""The MCP server: a thin layer over a `Harness` (the SDK's low-level `Server`; docs/serving.md).

`server.py` serves stdio or streamable HTTP at `/mcp`; calls run side by side in worker
threads, writes queueing on the store's writer lock; tools are listed with titles,
annotations and output schemas, and results carry `structuredContent` and, for a file,
`_meta.sha256`; a tool it does not list is the spec's -32602 error. `resume.py`: each POST's
event stream primed for resuming (event id, `retry`), each session with its own bounded
event store. `http_limits.py`: uvicorn's settings plus head and body deadlines and sizes,
bounded connections per address, an exit deadline after SIGTERM. `tenants.py` +
`tenant_app.py`: many stores behind one endpoint, the bearer token (stored as SHA-256)
choosing the tenant's own server; `tenant_pool.py`: tenants opened on first request, idle ones
closed least recently used first past `--open-tenants`, requests and event streams bounded
per tenant and in all.
"""
