"""What both studies need to run their cells as Ray tasks (docs/eval.md, "Running on Ray").

A cell travels to a worker as plain settings (paths, names, numbers), never as an open store,
index or model client: the worker opens its own, through the same code the local path uses,
and writes through the same run-folder kernel (memdir_study/runfolder.py), whose file locks already
serialize appends across processes. A model travels as a `ModelSpec`: its name and how it is
reached (server, tool protocol, round cap). Its key never travels in a spec and is never
written anywhere: a worker reads it from its environment, into which each task's runtime
environment puts only the key variables the run's models name and the data locations
(`PASSED_ENV`). Ray keeps a task's runtime environment with the job (its dashboard shows it),
so a key handed this way is as visible as the cluster's job records are.

Ray is the optional extra `ray`; nothing here imports it until a cluster is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from memdir.errors import MemdirError
from memdir.models import Model, get_model

# Where the data and caches are: not secret, and a worker must read the same benchmark files.
PASSED_ENV = ("MEMDIR_DATA", "MEMDIR_CACHE", "MEMDIR_OFFLINE", "MEMDIR_MODELS", "MEMDIR_WATCH")
# A small local cluster: two cores run a test or a laptop study without a dashboard or logs
# streamed back, and with an object store sized for cell settings and rows, not data.
LOCAL_OBJECT_STORE = 200 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    """How to build one of the run's models again in a worker: what `cli/model_opts.build_models`
    was given for it. Built by name, so a model that exists only in this process (a scripted
    one) cannot be shipped."""

    name: str
    base_url: str | None = None
    tool_protocol: str | None = None
    round_cap: int | None = None
    reasoning_effort: str | None = None  # the role's, when the model is one role's (`Model.with_settings`)

    @classmethod
    def of(cls, name: str, model: Model) -> ModelSpec:
        api = model.api
        if name.startswith("scripted"):
            raise MemdirError(
                f"model {name!r} lives in this process; a Ray worker builds its models by name "
                "(provider/model, local with --base-url), so run it with the local executor"
            )
        base_url = getattr(api, "base_url", None)
        if name.split("/")[0] == "local" and base_url is None:
            raise MemdirError(
                "--executor ray with the local model needs --base-url of a running server "
                "(memdir local-model serve): else each worker would start a server of its own"
            )
        return cls(name, base_url, api.tool_protocol, api.round_cap, model.config.reasoning_effort)

    def build(self) -> Model:
        model = get_model(self.name, base_url=self.base_url, tool_protocol=self.tool_protocol)
        model.api.round_cap = self.round_cap
        return model.with_settings(reasoning_effort=self.reasoning_effort) if self.reasoning_effort else model


def model_specs(models: Mapping[str, Model]) -> list[ModelSpec]:
    """The specs of every model of a run that makes calls (`offline` aside)."""
    return [ModelSpec.of(n, m) for n, m in sorted(models.items()) if not n.startswith("offline")]


def build_all(specs: Sequence[ModelSpec]) -> dict[str, Model]:
    return {s.name: s.build() for s in specs}


def worker_env(models: Mapping[str, Model]) -> dict[str, str]:
    """The environment a cluster's workers are handed: the key variables the run's models read
    (each provider's `api_key_env`, when set here) and the data locations; nothing else."""
    names = list(PASSED_ENV)
    names += sorted({str(e) for m in models.values() if (e := getattr(m.api, "api_key_env", None))})
    return {n: os.environ[n] for n in names if n in os.environ}


def require_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MemdirError("--executor ray needs the optional extra: pip install 'memdir[ray]'") from None
    return ray


@contextmanager
def cluster(address: str | None, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected to the cluster at `address` or to a local cluster started here; a Ray
    already initialized in this process is used as it is and left running."""
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    if address is not None:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            object_store_memory=LOCAL_OBJECT_STORE,
        )
    try:
        yield ray
    finally:
        ray.shutdown()


def remote_cell(ray: Any, fn: Callable[..., Any], env: Mapping[str, str]) -> Any:
    """`fn` as a Ray task of one CPU, never retried (a rerun resumes instead), handed `env`: a
    worker does not share this process's environment (a cluster's, or one started before a
    key was set), so each task gets the variables `worker_env` chose, and only those."""
    remote = ray.remote(num_cpus=1, max_retries=0)(fn)
    return remote.options(runtime_env={"env_vars": dict(env)}) if env else remote


def run_bounded(
    ray: Any,
    remote: Any,
    jobs: Sequence[Any],
    *,
    at_once: int | None,
    done: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """`remote.remote(job)` for each job, at most `at_once` in flight (None: as many as Ray
    schedules), results in the jobs' order; `done(i, result)` as each finishes. A worker's
    exception is raised here, after the tasks already in flight have finished."""
    results: list[Any] = [None] * len(jobs)
    pending: dict[Any, int] = {}
    error: BaseException | None = None
    queue = list(enumerate(jobs))
    while queue or pending:
        while queue and error is None and (at_once is None or len(pending) < at_once):
            i, job = queue.pop(0)
            pending[remote.remote(job)] = i
        if not pending:
            break
        ready, _ = ray.wait(list(pending), num_returns=1)
        i = pending.pop(ready[0])
        try:
            results[i] = ray.get(ready[0])
        except Exception as exc:  # a task's error: stop submitting, let the others finish
            error = error or exc
            queue.clear()
            continue
        if done is not None:
            done(i, results[i])
    if error is not None:
        cause = getattr(error, "cause", None)
        raise cause if isinstance(cause, BaseException) else error
    return results
