"""An episode as markdown: the chunk a management agent receives, and the episode log's entry."""

from __future__ import annotations

from memdir.store import frontmatter
from memdir_study.bench.alfworld import parse_goal
from memdir_study.bench.alfworld_env import Episode
from memdir_study.skills.hints import room_key
from memdir_study.skills.policy import room_receptacles


def episode_name(index: int, episode: Episode) -> str:
    """`e012-heat-apple`: chain position, family, object type (a kebab-case file stem)."""
    obj = parse_goal(episode.task, episode.game.family).obj
    return f"e{index:03d}-{episode.game.family}-{obj}"


def outcome(episode: Episode) -> str:
    return f"success in {episode.n_steps} steps" if episode.won else f"failure after {episode.n_steps} steps"


def render_episode(index: int, episode: Episode) -> str:
    """The whole attempt, verbatim: task, room, every action and observation, the outcome.

    `index` is the task's 1-based position in its chain; it is the `[E<index>]` locator.
    """
    loc = f"[E{index}]"
    head = frontmatter.dump(
        episode_name(index, episode),
        f"Episode {index} ({episode.game.family}, {outcome(episode)}): {episode.task}",
        {"type": "episode", "family": episode.game.family, "outcome": "success" if episode.won else "failure",
         "steps": episode.n_steps, "game": episode.game.id},
    )  # fmt: skip
    lines = [
        f"# Episode {index}: {episode.task}",
        "",
        f"- Task: {episode.task} {loc}",
        f"- Family: {episode.game.family}",
        f"- Outcome: {outcome(episode)} {loc}",
        f"- Room: {room_key(room_receptacles(episode.intro))}",
        "",
        "## Start",
        episode.intro.replace("-= Welcome to TextWorld, ALFRED! =-", "").strip(),
        "",
        "## Actions",
    ]
    for n, (action, obs) in enumerate(episode.steps, start=1):
        lines.append(f"{n}. > {action}")
        lines.append(f"   {obs.replace(chr(10), ' ')}")
    lines += ["", "## Outcome", f"{'Solved' if episode.won else 'Not solved'}: {outcome(episode)}. {loc}", ""]
    return head + "\n".join(lines)
