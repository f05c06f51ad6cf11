"""The `local` provider: the local model behind llama.cpp's server, through the OpenAI client.

It is an OpenAI-compatible server like any other, so everything fixed for it (calls written as
text, no null content, the tool protocols) holds for Ollama and vLLM users too. What is local
about it: the server is started on first use (or `--base-url` names one already running), the
requests of a process go to it one at a time (the server runs one anyway, so a request's time
is its own and its prompt can extend the previous one in the cache), and the context and output
caps are the small model's, not the roles' defaults.
"""

from __future__ import annotations

import asyncio

from memdir.models.base import ChatMessage, GenerateConfig, ModelError, ModelOutput, ToolInfo
from memdir.models.local import LocalModelSpec, LocalServer, missing_reason
from memdir.models.openai import OpenAIAPI
from memdir.models.protocols import ToolProtocol

# Measured on Qwen2.5-Coder-1.5B (docs/local-model.md): the protocol its roles call tools best with.
DEFAULT_LOCAL_PROTOCOL: ToolProtocol = "json-schema"
# Output tokens per call: a whole memory file fits; a runaway reply costs minutes, not an hour.
LOCAL_MAX_OUTPUT = 3_072
# A guard, not a budget: with `--logits_all false` the server's memory stays well under it at 16k
# context (it grew without bound with the logits of every position kept; docs/local-model.md;
# the figures: benchmarks/results/2026-12-06-docstring-figures.md, "models/local_api.py"). Should
# it still pass this, it is restarted between requests, which costs one cold prompt.
RESTART_RSS = 8 << 30


class LocalAPI(OpenAIAPI):
    def __init__(
        self, spec: LocalModelSpec, base_url: str | None = None, tool_protocol: ToolProtocol | None = None
    ) -> None:
        super().__init__(
            spec.alias,
            base_url,
            api_key_env="MEMDIR_LOCAL_API_KEY",
            max_tokens_field="max_tokens",
            tool_protocol=tool_protocol or DEFAULT_LOCAL_PROTOCOL,
            max_output=LOCAL_MAX_OUTPUT,
        )
        self.spec = spec
        self.context_window = spec.context
        self.require_first_call = True
        self.server: LocalServer | None = None
        self._gates: dict[int, asyncio.Lock] = {}

    def check_ready(self) -> None:
        """No key is needed: a server named by --base-url, or the installed model."""
        if self.base_url is None and (reason := missing_reason(self.spec)) is not None:
            raise ModelError(reason)

    def _gate(self) -> asyncio.Lock:
        loop = id(asyncio.get_running_loop())
        if loop not in self._gates:
            self._gates[loop] = asyncio.Lock()
        return self._gates[loop]

    async def generate(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        async with self._gate():
            if self.server is not None and self.server.rss_bytes() > RESTART_RSS:
                await asyncio.to_thread(self.server.stop)  # costs one cold prompt, not the run
                self.base_url = None
            if self.base_url is None:
                self.server = await asyncio.to_thread(LocalServer.shared, self.spec)
                self.base_url = self.server.base_url
                self._client = None
            return await super().generate(messages, tools, config)
