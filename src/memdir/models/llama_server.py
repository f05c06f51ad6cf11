"""llama.cpp's OpenAI-compatible server, started through us so it reports its prefix-cache hits.

llama-cpp-python's server reuses the KV cache for the longest prompt prefix it has already
evaluated (and, with `--cache`, restores saved states), but its responses leave
`usage.prompt_tokens_details.cached_tokens` out, so a client cannot tell a hit from a miss. The
prompt tokens a request really evaluates are exactly what the first `Llama.eval` of the request
receives; we count them per completion id, and a small ASGI wrapper writes the rest of the prompt
into the JSON response as `cached_tokens`, the field OpenAI uses (the server's response model
would drop an extra key set earlier).

With `MEMDIR_LLAMA_NO_PREFIX_REUSE=1` (and `--cache false`) the server forgets the evaluated prefix
before every request: prompt caching off, so the benchmark can set it beside caching on.

A schema-held reply is sampled the way llama.cpp's own server samples it (`grammar.py`): the
token is drawn without the grammar and checked against it, and only a rejected token is drawn
again with the grammar over the whole vocabulary. llama-cpp-python runs the grammar over every
candidate at every token (the whole vocabulary, 151,936 for Qwen2.5), which makes a schema-held
reply slower. The text a reply's schema forces (keys, brackets, the next turn's key) is drafted
and verified in one batch (`forced.py`). Times side by side:
benchmarks/results/2026-12-06-docstring-figures.md, "models/llama_server.py".
`MEMDIR_LLAMA_GRAMMAR_EVERY_TOKEN=1` and `MEMDIR_LLAMA_NO_DRAFTS=1` give the library's way back,
for the side-by-side benchmark (`benchmarks/grammar_sampling.py`).

Run as `python -m memdir.models.llama_server <llama_cpp.server arguments>`; needs the `local` extra.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import threading
from collections import OrderedDict
from typing import Any

NO_PREFIX_REUSE = "MEMDIR_LLAMA_NO_PREFIX_REUSE"  # "1": caching off, for the side-by-side benchmark
GRAMMAR_EVERY_TOKEN = "MEMDIR_LLAMA_GRAMMAR_EVERY_TOKEN"  # "1": the library's sampling, for the benchmark
NO_DRAFTS = "MEMDIR_LLAMA_NO_DRAFTS"  # "1": no drafts of the schema's forced text (`forced.py`)
_CACHED: OrderedDict[str, int] = OrderedDict()  # completion id -> prompt tokens not re-evaluated
_KEEP = 1024
_lock = threading.Lock()


def _install_cache_meter() -> None:
    import llama_cpp

    state = threading.local()
    original_eval = llama_cpp.Llama.eval
    original_chat = llama_cpp.Llama.create_chat_completion

    @functools.wraps(original_eval)
    def eval_(self: Any, tokens: Any) -> Any:
        if getattr(state, "first_eval", None) is None:
            state.first_eval = len(tokens)
        return original_eval(self, tokens)

    no_reuse = os.environ.get(NO_PREFIX_REUSE) == "1"

    @functools.wraps(original_chat)
    def chat(self: Any, *args: Any, **kwargs: Any) -> Any:
        state.first_eval = None
        if no_reuse:
            self.reset()  # forget the evaluated prefix: every prompt is evaluated whole
        result: Any = original_chat(self, *args, **kwargs)
        if isinstance(result, dict) and isinstance(result.get("usage"), dict):
            prompt = int(result["usage"].get("prompt_tokens") or 0)
            evaluated = state.first_eval if state.first_eval is not None else 0
            with _lock:
                _CACHED[str(result.get("id"))] = max(0, prompt - evaluated)
                while len(_CACHED) > _KEEP:
                    _CACHED.popitem(last=False)
        state.first_eval = None
        return result

    setattr(llama_cpp.Llama, "eval", eval_)  # noqa: B010 (typed stubs may or may not be installed)
    setattr(llama_cpp.Llama, "create_chat_completion", chat)  # noqa: B010


def annotate(body: bytes) -> bytes:
    """A chat completion's JSON with `usage.prompt_tokens_details.cached_tokens` filled in."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body
    if not isinstance(payload, dict) or not isinstance(payload.get("usage"), dict):
        return body
    with _lock:
        cached = _CACHED.pop(str(payload.get("id")), None)
    if cached is None:
        return body
    payload["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    return json.dumps(payload).encode()


class CacheUsage:
    """ASGI wrapper: rewrites JSON chat-completion responses through :func:`annotate`."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not str(scope.get("path", "")).endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                if b"application/json" not in headers.get(b"content-type", b""):
                    await send(message)  # a stream or an error page: passed through as it is
                    return
                start.update(message)
                return
            if not start or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = annotate(b"".join(chunks))
            kept = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            kept.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": kept})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


def _exit_with_parent() -> None:
    """Exit when the process that started us is gone (we were re-parented)."""
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def main() -> None:
    _exit_with_parent()
    _install_cache_meter()
    if os.environ.get(GRAMMAR_EVERY_TOKEN) != "1":
        from memdir.models.grammar import install_grammar_first

        install_grammar_first()
    if os.environ.get(NO_DRAFTS) != "1":
        from memdir.models.forced import install_schema_drafts

        install_schema_drafts()
    app_module: Any = importlib.import_module("llama_cpp.server.app")
    create_app = app_module.create_app

    def wrapped_create_app(*args: Any, **kwargs: Any) -> Any:
        return CacheUsage(create_app(*args, **kwargs))

    app_module.create_app = wrapped_create_app  # __main__ binds the name when imported, just below
    serve: Any = importlib.import_module("llama_cpp.server.__main__").main
    serve()


if __name__ == "__main__":
    main()
