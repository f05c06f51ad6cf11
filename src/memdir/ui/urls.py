"""Every URL the pages link to, built in one place so routes and links cannot drift apart."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from memdir.conventions import parse_citation


def _q(**params: object) -> str:
    kept = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return ("?" + urlencode(kept)) if kept else ""


class Urls:
    """Links of one store (`sid`); a past step's links carry `step`."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.base = "/s/" + quote(sid, safe="")

    def tree(self, path: str | None = None, step: int | None = None, start: int | None = None) -> str:
        """A folder's page; `start`: its entries from that one on (0 is the first)."""
        if step is not None:
            return f"{self.base}/step/{step}/tree" + _q(path=path)
        return f"{self.base}/tree" + _q(path=path, **{"from": start or None})

    def children(self, path: str) -> str:
        return f"{self.base}/children" + _q(path=path)

    def file(
        self,
        path: str,
        *,
        lines: str | None = None,
        step: int | None = None,
        view: str | None = None,
        start: int | None = None,
    ) -> str:
        """A file's page; `lines` cited (highlighted), `start`: its page from that line on."""
        anchor = f"#L{lines.split('-')[0]}" if lines else ""
        query = _q(path=path, lines=lines, view=view, **{"from": start})
        if step is not None:
            return f"{self.base}/step/{step}/file" + query + anchor
        return f"{self.base}/file" + query + anchor

    def located(self, where: str) -> str:
        """A finding's place (`/memories/a.md:12`, a folder, or the root) as a link: a file
        opens at the line, a folder in the tree."""
        path, sep, line = where.rpartition(":")
        if not sep or not line.isdigit():
            path, line = where, ""
        if path.endswith(".md"):
            return self.file(path, lines=line or None)
        return self.tree(path if path != "/memories" else None)

    def cited(self, citation: str, step: int | None = None) -> str:
        """A citation (conventions' grammar) opening the file at the cited lines."""
        c = parse_citation(citation)
        lines = None if c.start is None else f"{c.start}-{c.end or c.start}"
        return self.file(c.path, lines=lines, step=step)

    def search(self, q: str | None = None, mode: str | None = None) -> str:
        return f"{self.base}/search" + _q(q=q, mode=mode)

    def health(self) -> str:
        return f"{self.base}/health"

    def history(self, operation: str | None = None, start: int | None = None) -> str:
        """The history, one row per operation; with `operation`, that operation's steps;
        `start`: the page from that row on (0 is the newest)."""
        return f"{self.base}/history" + _q(operation=operation, **{"from": start or None})

    def step(self, index: int) -> str:
        return f"{self.base}/step/{index}"

    def at(self, commit: str) -> str:
        return f"{self.base}/at" + _q(commit=commit)

    def facts(self, old: int | None = None, new: int | None = None) -> str:
        return f"{self.base}/facts" + _q(old=old, new=new)

    def growth_plot(self, name: str) -> str:
        return f"{self.base}/growth/{quote(name)}"


def turn_url(benchmark: str, sample: str, locator: str) -> str:
    return "/turn" + _q(bench=benchmark, sample=sample, loc=locator)


def run_url(run: str, page: str = "", **params: object) -> str:
    """A run's pages: the report (""), "answers" and "asset"; runs are named by their folder
    relative to --runs, so by a query parameter rather than a path segment."""
    return "/run" + (f"/{page}" if page else "") + _q(name=run, **params)
