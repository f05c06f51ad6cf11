"""Serving past one machine: the tenants' MCP server as a Ray Serve application
(docs/serving.md, "Serving past one machine").

`ray_app.py` builds and runs it (the only module that imports Ray); `ingress.py` is its front
(tokens, limits, the rebinding guard, then the tenant's replica); `replica.py` the work of a
tenant replica (a stateless MCP server per token over the tenant's copy); `durable.py` a
tenant's copy on a replica's disk, cloned from the tenant's remote and synced back before a
write is acknowledged; `wire.py` what travels between the two.
"""
