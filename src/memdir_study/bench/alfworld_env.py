"""One ALFWorld game as a text environment: reset, step, the game's own success signal.

The `alfworld` package (and TextWorld under it) is imported only when an environment is made,
so the rest of memdir works without the optional `alfworld` extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memdir.errors import MemdirError
from memdir_study.bench.alfworld import Game

STEP_CAP = 50
TASK_PREFIX = "Your task is to: "


@dataclass
class Observation:
    """What the agent sees after reset or a step."""

    text: str
    admissible: list[str]
    done: bool = False
    won: bool = False


@dataclass
class Episode:
    """The record of one attempt: the task, every action with its observation, the outcome."""

    game: Game
    task: str
    intro: str
    steps: list[tuple[str, str]] = field(default_factory=list)
    won: bool = False
    # Actions sent that were not among the admissible commands of the state they were sent in:
    # the invalid-action rate the paper reports (19-40% for its executors, which were not shown
    # the admissible list). An executor that only sends listed actions scores 0.
    invalid_actions: int = 0

    @property
    def n_steps(self) -> int:
        return len(self.steps)


def _textworld() -> tuple[Any, Any, Any]:
    try:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
    except ModuleNotFoundError as exc:
        raise MemdirError(
            f"the ALFWorld environment needs the optional extra ({exc.name} is missing): "
            "pip install 'memdir[alfworld]'"
        ) from None
    return textworld, AlfredDemangler, AlfredInfos


class AlfworldEnv:
    """A game loaded through TextWorld with ALFWorld's wrappers; at most `step_cap` actions.

    Only what an agent may see is requested from TextWorld (observation, admissible commands,
    won); the planner's solution (`policy_commands`) is never asked for, and is slow anyway.
    """

    def __init__(self, game: Game, step_cap: int = STEP_CAP) -> None:
        textworld, demangler, infos_wrapper = _textworld()
        infos = textworld.EnvInfos(won=True, admissible_commands=True)
        self.game = game
        self.step_cap = step_cap
        self._env = textworld.start(
            str(game.path), request_infos=infos, wrappers=[demangler(), infos_wrapper]
        )
        self.episode: Episode | None = None
        self._admissible: frozenset[str] = frozenset()  # of the current state

    def reset(self) -> Observation:
        state = self._env.reset()
        feedback = str(state.feedback).strip()
        intro, _, task = feedback.rpartition(TASK_PREFIX)
        if not task:
            raise MemdirError(f"game {self.game.id} did not state a task: {feedback[:200]!r}")
        self.episode = Episode(self.game, task.strip(), intro.strip())
        self._admissible = frozenset(state.admissible_commands)
        return Observation(feedback, sorted(state.admissible_commands))

    def step(self, action: str) -> Observation:
        ep = self.episode
        if ep is None:
            raise MemdirError("call reset() before step()")
        if ep.won or ep.n_steps >= self.step_cap:
            raise MemdirError(f"the episode is over ({ep.n_steps} steps, won={ep.won}); reset to play again")
        ep.invalid_actions += action not in self._admissible
        state, _, done = self._env.step(action)
        self._admissible = frozenset(state.admissible_commands)
        text = str(state.feedback).strip()
        ep.steps.append((action, text))
        ep.won = bool(state["won"])
        over = bool(done) or ep.won or ep.n_steps >= self.step_cap
        return Observation(text, sorted(state.admissible_commands), over, ep.won)

    def close(self) -> None:
        self._env.close()

    def __enter__(self) -> AlfworldEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
