"""Grammar-held sampling that checks the drawn token first, as llama.cpp's own sampler does.

llama-cpp-python puts the grammar into the sampler chain, so every token of a schema-held reply
runs the grammar over the whole vocabulary (151,936 candidates for Qwen2.5) before the token is
drawn. llama.cpp's common sampler (what its `llama-server` uses) draws the token without the
grammar, checks that one token, and goes over the vocabulary with the grammar only when the
token is rejected, which inside a JSON string or a free-text value is rare. At temperature 0 the
two give the same token: the greedy pick over all candidates, when the grammar allows it, is
also the greedy pick over the allowed ones; otherwise both pick over the allowed ones.

Runs inside the server process (`llama_server.py`); needs the `local` extra.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any


class GrammarFirstSampler:
    """The library's sampler chain without the grammar, and the grammar beside it."""

    def __init__(self, chain: Any, llama: Any, grammar: Any) -> None:
        import llama_cpp
        import numpy as np

        self._lib = llama_cpp
        self.chain = chain  # llama-cpp-python's LlamaSampler (penalties, temperature, pick)
        self.n_vocab = int(llama._n_vocab)
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp could not build the grammar of this request")
        self._buffer = (llama_cpp.llama_token_data * self.n_vocab)()
        self._view = np.ctypeslib.as_array(self._buffer)
        self._ids = np.arange(self.n_vocab, dtype=np.int32)
        self._one = (llama_cpp.llama_token_data * 1)()

    def _all(self, ctx: Any, idx: int) -> Any:
        """Every candidate with its logit, as llama_sampler_sample lays them out."""
        import numpy as np

        logits = self._lib.llama_get_logits_ith(ctx, idx)
        self._view["id"] = self._ids
        self._view["logit"] = np.ctypeslib.as_array(logits, shape=(self.n_vocab,))
        self._view["p"] = 0.0
        return self._lib.llama_token_data_array(
            data=self._buffer, size=self.n_vocab, selected=-1, sorted=False
        )

    def _pick(self, cur: Any) -> int:
        self._lib.llama_sampler_apply(self.chain.sampler, ctypes.byref(cur))
        if cur.selected < 0 or cur.selected >= cur.size:
            raise RuntimeError("the sampler chain selected no token")
        return int(cur.data[cur.selected].id)

    def allows(self, token: int) -> bool:
        slot: Any = self._one[0]
        slot.id, slot.logit, slot.p = token, 1.0, 0.0
        one = self._lib.llama_token_data_array(data=self._one, size=1, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self.grammar, ctypes.byref(one))
        return not math.isinf(self._one[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        token = self._pick(self._all(ctx.ctx, idx))
        if not self.allows(token):
            cur = self._all(ctx.ctx, idx)
            self._lib.llama_sampler_apply(self.grammar, ctypes.byref(cur))
            token = self._pick(cur)
        self._lib.llama_sampler_accept(self.grammar, token)
        self._lib.llama_sampler_accept(self.chain.sampler, token)
        return token

    def close(self) -> None:
        grammar, self.grammar = self.grammar, None
        if grammar:
            self._lib.llama_sampler_free(grammar)
        self.chain.close()

    def __del__(self) -> None:
        self.close()


def install_grammar_first() -> None:
    """Make `Llama` build a `GrammarFirstSampler` whenever a request carries a grammar."""
    import llama_cpp

    original: Any = llama_cpp.Llama._init_sampler

    @functools.wraps(original)
    def init_sampler(self: Any, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
        chain = original(self, *args, grammar=None, **kwargs)
        return chain if grammar is None else GrammarFirstSampler(chain, self, grammar)

    setattr(llama_cpp.Llama, "_init_sampler", init_sampler)  # noqa: B010
