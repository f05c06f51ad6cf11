"""Where benchmark files come from: `MEMDIR_DATA` first, then a download cache.

The data folder is laid out as the project's shared data (`locomo/locomo10.json`,
`realtalk/Chat_*.json`, `personamem/questions_32k.csv`, ...). A file missing there is fetched
once from its public source, pinned to the commit the data README names, into the cache
(`MEMDIR_CACHE`, default `~/.cache/memdir`). `MEMDIR_OFFLINE=1` forbids the download. Every
failure names the file, the URL and the environment variables, so the fix is one command away.
"""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from memdir.errors import MemdirError

LOCOMO_COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
REALTALK_COMMIT = "b903e06a9770bf4e5fe9018c3e132889666d3b4a"
LOCOMO_URL = f"https://raw.githubusercontent.com/snap-research/LoCoMo/{LOCOMO_COMMIT}/data/locomo10.json"
REALTALK_URL = f"https://raw.githubusercontent.com/danny911kr/REALTALK/{REALTALK_COMMIT}/data/{{name}}.json"
PERSONAMEM_URL = "https://huggingface.co/datasets/bowen-upenn/PersonaMem/resolve/main/{name}"


class DataUnavailable(MemdirError):
    """A benchmark file is neither under MEMDIR_DATA nor in the cache, and could not be fetched."""


class UnknownSample(MemdirError):
    """A sample id that the benchmark does not have."""


def data_root() -> Path:
    """`MEMDIR_DATA`, else `../shared/data` beside the repository root."""
    env = os.environ.get("MEMDIR_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[4].parent / "shared" / "data"


def cache_root() -> Path:
    env = os.environ.get("MEMDIR_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "memdir"


def locate(relpath: str, url: str, *, source: str = "") -> Path:
    """The local path of a benchmark file, downloading it into the cache if needed."""
    for base in (data_root(), cache_root() / "data"):
        candidate = base / relpath
        if candidate.is_file():
            return candidate
    target = cache_root() / "data" / relpath
    where = f"put it at {data_root() / relpath} (or point MEMDIR_DATA at a folder that has {relpath})"
    if os.environ.get("MEMDIR_OFFLINE", "") not in ("", "0"):
        raise DataUnavailable(
            f"{relpath} is missing and MEMDIR_OFFLINE is set, so it was not downloaded from {url}; {where}"
            + (f". Source: {source}" if source else "")
        )
    try:
        _download(url, target)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise DataUnavailable(
            f"{relpath} is missing and downloading it from {url} failed ({exc}); {where}, "
            f"or unset MEMDIR_OFFLINE and retry with network access"
            + (f". Source: {source}" if source else "")
        ) from None
    return target


def _download(url: str, target: Path, timeout: float = 60.0) -> None:
    """Fetch into a temp file beside the target, then rename: a broken download leaves nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while block := resp.read(1 << 16):
                out.write(block)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
