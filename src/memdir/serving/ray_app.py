"""`memdir serve --tenants FILE --http PORT --ray`: the tenants' MCP server as a Ray Serve
application (docs/serving.md, "Serving past one machine").

Two deployments. `front` (ingress.py) authenticates each request and forwards it to `tenants`
through a handle whose multiplexed model id is the tenant's name: Ray Serve's model
multiplexing sends a tenant's requests to the replica that has it loaded, and a replica loads a
tenant the way it would a model, by cloning the tenant's remote onto its own disk (durable.py).
A replica lost is replaced by Serve; the tenants it held load again from their remotes on
whichever replica their next request reaches.

Ray is imported here only, and this module only by the command that serves on Ray, so the
product needs Ray for nothing else (the `ray` extra).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from memdir.errors import MemdirError
from memdir.mcp.tenants import OPEN_TENANTS, PER_TENANT, TenantToken
from memdir.mcp.tenants_live import LiveTenants
from memdir.serving.durable import remote_of
from memdir.serving.ingress import Front, ReplicaLost, front_app
from memdir.serving.replica import LoadedTenant, answer
from memdir.serving.wire import Forwarded, Grant, Reply
from memdir.tools.guards import Guards

try:
    import ray
    from ray import serve
except ImportError:  # pragma: no cover - the CLI says how to install it before importing this
    raise MemdirError("serving on Ray needs the optional extra: pip install 'memdir[ray]'") from None

APP = "memdir"
ROUTE = "/mcp"
MAX_ONGOING = 64  # requests a replica takes at once; Serve sends a tenant elsewhere only past it


class TenantReplica:
    """A tenant replica: loads tenants from their remotes, answers their requests."""

    def __init__(self, guards: Guards | None, open_tenants: int, workdir: str | None) -> None:
        self.guards = guards
        self.workdir = Path(tempfile.mkdtemp(prefix="memdir-replica-", dir=workdir))
        self.grants: dict[str, Grant] = {}  # the grant of the request that asks for each load

        async def load(tenant: str) -> LoadedTenant:
            loaded = LoadedTenant(self.grants[tenant], self.workdir, self.guards)  # cloned on first use
            loaded.__dict__["__del__"] = loaded.close  # awaited by Serve when it unloads the tenant
            return loaded

        self.tenant = serve.multiplexed(max_num_models_per_replica=open_tenants)(load)

    async def answer(self, request: Forwarded) -> Reply:
        tenant = serve.get_multiplexed_model_id()
        self.grants[tenant] = request.grant
        while True:
            loaded: LoadedTenant = await self.tenant(tenant)
            if not loaded.closing:  # else it was unloaded after this request got it: load anew
                return await answer(loaded, request)


class FrontIngress:
    """The ingress: tokens, limits and the rebinding guard, then the tenant's replica."""

    def __init__(
        self, replicas: Any, tenants_file: str, host: str, remotes: dict[str, str], per_tenant: int
    ) -> None:
        self.replicas = replicas
        self.live = LiveTenants.watch(tenants_file)
        self.remotes = dict(remotes)
        self.front = Front(self.live, self._remote_of, self._forward, per_tenant)
        self.host = host

    def __serve_build_asgi_app__(self) -> Any:
        return front_app(self.front, self.host, ROUTE)

    def _remote_of(self, entry: TenantToken) -> str | None:
        found = self.remotes.get(entry.tenant)
        if found is None and os.path.isdir(entry.real_root):  # a tenant added since the start
            found = remote_of(entry.real_root)
            if found is not None:
                self.remotes[entry.tenant] = found
        return found

    async def _forward(self, request: Forwarded) -> Reply:
        handle = self.replicas.options(multiplexed_model_id=request.grant.tenant)
        try:
            answered: Reply = await handle.answer.remote(request)
        except (ray.exceptions.RayError, serve.exceptions.BackPressureError) as exc:
            raise ReplicaLost(
                f"the replica serving tenant {request.grant.tenant!r} was lost before it answered "
                f"({type(exc).__name__}); nothing of this request was acknowledged: retry it"
            ) from None
        return answered


TENANTS = serve.deployment(name="tenants")(TenantReplica)
FRONT = serve.deployment(name="front")(serve.ingress()(FrontIngress))


def tenant_remotes(live: LiveTenants) -> dict[str, str]:
    """Each tenant's remote, as its root remembers it; refused naming every tenant without one."""
    remotes: dict[str, str] = {}
    missing: list[TenantToken] = []
    for entry in {t.tenant: t for t in live.current.tokens}.values():
        found = remote_of(entry.real_root)
        if found is None:
            missing.append(entry)
        else:
            remotes[entry.tenant] = found
    if missing:
        shown = ", ".join(f"{t.tenant} ({t.root})" for t in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise MemdirError(
            f"--ray serves each tenant from its remote, and these have none: {shown}{more}; give "
            "each one with 'memdir sync ROOT REMOTE' (a bare repository every node can reach)"
        )
    return remotes


def application(
    tenants_file: str,
    host: str = "127.0.0.1",
    replicas: int = 1,
    guards: Guards | None = None,
    open_tenants: int = OPEN_TENANTS,
    per_tenant: int = PER_TENANT,
    replica_cpus: float = 1.0,
    workdir: str | None = None,
) -> Any:
    """The Serve application (not started): `replicas` tenant replicas behind one ingress."""
    live = LiveTenants.watch(tenants_file)
    remotes = tenant_remotes(live)
    backend = TENANTS.options(
        num_replicas=replicas,
        max_ongoing_requests=MAX_ONGOING,
        ray_actor_options={"num_cpus": replica_cpus},
    ).bind(guards, open_tenants, workdir)
    return FRONT.options(
        max_ongoing_requests=MAX_ONGOING * max(1, replicas), ray_actor_options={"num_cpus": 0}
    ).bind(backend, os.path.abspath(tenants_file), host, remotes, per_tenant)


def deploy(app: Any, host: str, port: int) -> None:
    """Start Serve's proxy on `host:port` and run the application on the connected cluster."""
    serve.start(http_options={"host": host, "port": port})
    serve.run(app, name=APP, route_prefix="/")  # the ingress answers ROUTE, and 404 elsewhere


def serve_on_ray(tenants_file: str, port: int, host: str = "127.0.0.1", **options: Any) -> None:
    """`memdir serve --ray`: join the cluster RAY_ADDRESS names (or `ray start` made here), or
    start a local one; serve until SIGINT or SIGTERM, then take the application down."""
    app = application(tenants_file, host, **options)
    ray.init(logging_level=logging.WARNING, log_to_driver=False)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        deploy(app, host, port)
        print(
            f"memdir: serving the tenants on Ray at http://{host}:{port}{ROUTE}", file=sys.stderr, flush=True
        )
        stop.wait()
    finally:
        serve.delete(APP)
        ray.shutdown()
