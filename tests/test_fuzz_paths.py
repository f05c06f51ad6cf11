"""Path fuzzing (fast subset): generated hostile paths against every tool, in process and
through MCP; an audit hook proves no file-system access leaves the root. The full run
(>=100,000 calls) is benchmarks/reliability/fuzz_paths.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from mcp import Client
from tests.hostile import AccessAuditor, plant, tool_calls

from memdir.mcp.server import build_server
from memdir.store import spec
from memdir.store.store import Store
from memdir.tools.profiles import Harness

SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("fuzz")
    root, outside = base / "mem", base / "outside"
    spec.init(Store(root, create=True))
    plant(root, outside)
    return base, root, outside


def _outside_state(outside: Path) -> dict[str, bytes]:
    return {str(p.relative_to(outside)): p.read_bytes() for p in sorted(outside.rglob("*")) if p.is_file()}


def _check_call(auditor: AccessAuditor, harness: Harness, root: Path, name: str, args: dict[str, Any]) -> str:
    auditor.arm([root])
    try:
        res = harness.call(name, args)
    finally:
        auditor.disarm()
    assert not auditor.violations, (name, args, auditor.violations)
    assert "CANARY" not in res.text, (name, args, res.text)
    return res.text


def test_fuzz_tools_in_process(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    before = _outside_state(outside)
    auditor = AccessAuditor.install()
    harness = Harness(Store(root), "manage")
    search = Harness(Store(root), "search")

    @SETTINGS
    @given(tool_calls())
    def run(call: tuple[str, dict[str, Any]]) -> None:
        name, args = call
        h = search if name in ("toc", "section_read") else harness
        _check_call(auditor, h, root, name, args)
        if not (root / "MEMORY.md").exists():
            spec.init(Store(root))  # a fuzzed delete may remove it; keep the arena a memory
        plant(root, outside)  # a fuzzed delete or rename may remove the plants: put them back

    run()
    assert _outside_state(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == ["canary.md", "passwd"]


def test_fuzz_tools_over_mcp(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    before = _outside_state(outside)
    harness = Harness(Store(root), "manage")

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(tool_calls())
    def run(call: tuple[str, dict[str, Any]]) -> None:
        name, args = call
        if name in ("toc", "section_read"):
            return

        async def go() -> str:
            async with Client(build_server(harness)) as client:
                r = await client.call_tool(name, args)
                return "".join(getattr(c, "text", "") for c in r.content)

        text = anyio.run(go)
        assert "CANARY" not in text
        plant(root, outside)

    run()
    assert _outside_state(outside) == before
    shutil.rmtree(root / ".memdir", ignore_errors=True)


def test_auditor_catches_an_outside_access(arena: tuple[Path, Path, Path]) -> None:
    _, root, outside = arena
    auditor = AccessAuditor.install()
    inside = root / "auditor-probe.md"  # its own file: the fuzz tests may have deleted any other
    inside.write_text("probe\n")
    auditor.arm([root])
    try:
        (outside / "canary.md").read_bytes()
        inside.read_bytes()
    finally:
        auditor.disarm()
    assert [v[1] for v in auditor.violations] == [str(outside / "canary.md")]
