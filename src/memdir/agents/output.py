"""What one role call returns, model or baseline: its text, answer and citations, its episode."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memdir.agents.loop import Episode


@dataclass
class RoleOutput:
    role: str
    model: str
    text: str
    answer: str | None = None
    citations: list[str] = field(default_factory=list)
    episode: Episode | None = None
    baseline: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"role": self.role, "model": self.model, "baseline": self.baseline}
        if self.answer is not None:
            d |= {"answer": self.answer, "citations": self.citations}
        else:
            d["text"] = self.text
        if self.episode is not None:
            ep = self.episode
            d |= {
                "rounds": ep.rounds,
                "tool_calls": ep.tool_calls,
                "stop": ep.stop,
                "usage": ep.usage.as_dict(),
            }
            if ep.stop_reason:
                d["stop_reason"] = ep.stop_reason
        return d | self.extra
