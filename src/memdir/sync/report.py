"""What one sync did, as the CLI prints it and the API returns it."""

from __future__ import annotations

from dataclasses import dataclass, field

from memdir.jsontypes import JsonObject


@dataclass
class SyncReport:
    """One sync: the files it brought here (`pulled`) and sent (`pushed`), the facts it kept
    that the remote had dropped (`kept`: `path: line`), the files where both sides edited a
    line differently and both versions were kept, marked (`conflicts`), the keys whose values
    both sides changed (`superseded`), and the records that name it: the operation in this
    store's history (None when nothing here changed) and the commit now on the remote."""

    remote: str
    branch: str
    pulled: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    operation: str | None = None
    commit: str | None = None
    attempts: int = 1

    @property
    def in_sync(self) -> bool:
        """Nothing moved either way: the store and the remote already held the same files."""
        return not (self.pulled or self.pushed)

    def verdict(self) -> str:
        where = f"{self.remote} ({self.branch})"
        if self.in_sync:
            return f"already in sync with {where}"
        parts = []
        if self.pulled:
            parts.append(f"{len(self.pulled)} file(s) changed here")
        if self.pushed:
            parts.append(f"{len(self.pushed)} file(s) sent")
        said = f"synced with {where}: " + ", ".join(parts)
        if self.kept:
            said += f"; kept {len(self.kept)} fact line(s) the remote had dropped"
        if self.conflicts:
            said += (
                f"; {len(self.conflicts)} file(s) hold lines both sides edited differently, both kept "
                "and marked ('memdir check' lists them)"
            )
        if self.operation:
            said += f"; undo here with 'memdir revert ROOT --operation {self.operation}'"
        return said

    def lines(self) -> list[str]:
        out = [f"pulled {p}" for p in self.pulled]
        out += [f"pushed {p}" for p in self.pushed]
        out += [f"kept {k}" for k in self.kept]
        out += [f"superseded {k}" for k in self.superseded]
        out += [f"both versions kept in {p}" for p in self.conflicts]
        return out

    def as_json(self) -> JsonObject:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "in_sync": self.in_sync,
            "pulled": list(self.pulled),
            "pushed": list(self.pushed),
            "kept": list(self.kept),
            "conflicts": list(self.conflicts),
            "superseded": list(self.superseded),
            "operation": self.operation,
            "commit": self.commit,
            "attempts": self.attempts,
            "verdict": self.verdict(),
        }
