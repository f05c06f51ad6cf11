"""`memdir study bench retrieval`'s metrics, checked by hand on a tiny conversation whose rankings are
fixed by construction: each query word sits in known turns only, so the ranked chunks, and
from them every figure, can be written down before the run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from memdir.cli.main import cli
from memdir.search.embed import embedder_missing
from memdir.search.index import SearchIndex
from memdir.stream import Turn
from memdir_study.bench.types import Question, Sample
from memdir_study.eval.retrieval import (
    ConversationResult,
    Figures,
    chunk_level,
    counted,
    dump,
    evaluate,
    from_raw,
    hits,
    ndcg,
    rank_chunks,
    raw,
    section_level,
)

FILLER = ("I went for a walk by the river.", "Lovely, the weather was warm.", "My sister called me.")
SPECIAL = {
    "S1T3": "I rode a zeppelin over the lake.",
    "S1T4": "My cousin has a red kite.",
    "S1T9": "A pineapple, a pineapple, one more pineapple.",
    "S2T1": "I started painting on weekends.",
    "S2T5": "We shared a pineapple at lunch.",
    "S3T2": "A walrus slept at the harbour.",
}


def _sample() -> Sample:
    """3 sessions of 10, 6 and 5 turns: chunks 1 = S1T1-8, 2 = S1T9-10, 3 = S2, 4 = S3."""
    turns = []
    for s, (n, date) in enumerate(((10, "2023-05-01"), (6, "2023-06-01"), (5, "2023-07-01")), start=1):
        for t in range(1, n + 1):
            loc = f"S{s}T{t}"
            turns.append(Turn(loc, "Ann" if t % 2 else "Ben", SPECIAL.get(loc, FILLER[t % 3]), date))
    questions = [
        Question("q1", "single-hop", "zeppelin", "Ann", ("S1T3",), order=1),
        Question("q2", "multi-hop", "walrus", "x", ("S1T4", "S3T2"), order=2),
        Question("q3", "single-hop", "zeppelin walrus", "x", ("S2T1",), order=3),
        Question("q4", "single-hop", "pineapple", "x", ("S2T5",), order=4),
        Question("q5", "open-domain", "kite", "x", (), order=5),  # no evidence: not counted
        Question("q6", "single-hop", "kite", "x", ("S9T9",), order=6),  # names no turn: not counted
    ]
    dates: dict[int, str | None] = {1: "2023-05-01", 2: "2023-06-01", 3: "2023-07-01"}
    return Sample("synthetic", "tiny", turns, questions, dates, speakers=["Ann", "Ben"])


def chunk(n: int) -> str:
    return f"/memories/chunks/chunk-{n:04d}.md"


def test_hits_any_all_and_ndcg_by_hand() -> None:
    ranked = [{"a"}, set(), {"b", "z"}]
    got = hits(ranked, {"a", "b"})
    assert (got["any@1"], got["all@1"], got["any@3"], got["all@3"], got["all@10"]) == (1, 0, 1, 1, 1)
    assert hits([set(), {"b"}], {"a", "b"})["any@1"] == 0 and hits([], {"a"})["all@10"] == 0
    # relevant at ranks 2 and 3 of 3 relevant in all: (1/log2 3 + 1/2) / (1 + 1/log2 3 + 1/2)
    want = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3) + 0.5)
    assert ndcg([False, True, True], 3) == pytest.approx(want)
    assert ndcg([True] * 12, 20) == pytest.approx(1.0) and ndcg([False], 1) == 0.0


def test_counted_questions_need_evidence_that_names_a_turn() -> None:
    assert [q.id for q in counted(_sample())] == ["q1", "q2", "q3", "q4"]
    assert [q.id for q in counted(_sample(), 2)] == ["q1", "q2"]


@pytest.mark.parametrize("mode", ["files", "bm25"])
def test_chunk_level_figures_by_hand(tmp_path: Path, mode: str) -> None:
    sample = _sample()
    n, figs = chunk_level(sample, counted(sample), [mode], tmp_path / "c")
    assert n == 4
    f = figs[mode]
    r = f.rates()
    # rankings: q1 [1]; q2 [4] (its other evidence, chunk 1, never comes); q3 chunks 1 and 4,
    # neither holding S2T1; q4 [2, 3] (chunk 2 says pineapple three times in two turns)
    assert f.questions == 4
    assert (r["any@1"], r["any@3"], r["any@10"]) == (0.5, 0.75, 0.75)
    assert (r["all@1"], r["all@3"], r["all@10"]) == (0.25, 0.5, 0.5)
    q2 = 1 / (1 + 1 / math.log2(3))  # chunk 4 first of the 2 relevant (1 and 4)
    q4 = 1 / math.log2(3)  # chunk 3 second, the one relevant
    assert r["ndcg@10"] == pytest.approx((1 + q2 + 0 + q4) / 4)
    # sessions: q1 [1] of {1}; q2 [3] of {1, 3}; q3 [1, 3] or [3, 1] of {2}; q4 [1, 2] of {2}
    assert (r["session_any@1"], r["session_any@3"]) == (0.5, 0.75)
    assert (r["session_all@1"], r["session_all@3"]) == (0.25, 0.5)
    assert f.categories == {"single-hop": [3, 2], "multi-hop": [1, 1]}
    assert len(f.query_seconds) == 4 and f.build_seconds > 0


def test_rankings_skip_memory_md_and_dedupe_files(tmp_path: Path) -> None:
    sample = _sample()
    chunk_level(sample, [], ["bm25"], tmp_path / "c")  # builds the store and its units
    from memdir.store.store import Store

    index = SearchIndex.for_store(Store(tmp_path / "c"))
    assert rank_chunks(index, "files", "pineapple") == [chunk(2), chunk(3)]
    assert rank_chunks(index, "bm25", "pineapple") == [chunk(2), chunk(3)]
    assert rank_chunks(index, "files", "stream order") == []  # only MEMORY.md says it


def test_the_session_hook_replaces_the_evidence_sessions(tmp_path: Path) -> None:
    sample = _sample()
    _, figs = chunk_level(sample, counted(sample), ["files"], tmp_path / "c", lambda s, q: {3})
    r = figs["files"].rates()
    # only q2 ([3]) and q3 ([1, 3] either way) rank session 3 within 3
    assert r["session_any@3"] == 0.5 and r["any@1"] == 0.5


def test_section_level_over_the_dump_by_hand(tmp_path: Path) -> None:
    sample = _sample()
    figs = section_level(dump(sample, tmp_path / "d"), sample, counted(sample), ["bm25"])
    r = figs["bm25"].rates()
    # one section per session file: q1 session 1 (S1T3); q2 session 3 (S3T2); q3 sessions 1 and
    # 3 (not 2); q4 session 1 (pineapple three times) before session 2 (S2T5)
    assert (r["any@1"], r["any@3"], r["any@10"]) == (0.5, 0.75, 0.75)
    assert "all@1" not in r and r["top5_bytes"] > 0


def test_evaluate_runs_both_section_stores_and_serializes(tmp_path: Path) -> None:
    result = evaluate(_sample(), tmp_path, ["bm25", "files"])
    assert list(result.chunk) == ["files", "bm25"]  # units come after the file index
    assert set(result.sections) == {"curated", "dump"} and result.store_seconds["curated"] > 0
    assert result.sections["curated"]["bm25"].questions == 4
    data = json.loads(json.dumps(result.as_json()))
    assert data["chunk"]["files"]["any@1"] == 0.5
    assert data["chunk"]["files"]["categories"]["single-hop"] == {"questions": 3, "any@5": 0.6667}


@pytest.mark.skipif(embedder_missing() is not None, reason=str(embedder_missing()))
def test_dense_and_hybrid_share_one_build(tmp_path: Path) -> None:
    sample = _sample()
    _, figs = chunk_level(sample, counted(sample), ["dense", "hybrid", "hybrid-convex"], tmp_path / "c")
    assert figs["dense"].build_seconds > 0
    assert figs["dense"].build_seconds == figs["hybrid"].build_seconds == figs["hybrid-convex"].build_seconds
    assert all(0 <= v <= 1 for f in figs.values() for v in f.rates().values())
    assert figs["hybrid"].rates()["any@10"] == 1.0  # four chunks: every ranking holds them all


def test_cli_json_on_a_locomo_conversation(tmp_path: Path) -> None:
    from memdir_study.bench import DataUnavailable, locomo

    try:
        locomo.load("conv-26")
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    args = ["study", "bench", "retrieval", "-b", "locomo", "-c", "conv-26", "--questions", "5"]
    args += ["--modes", "files,bm25", "--no-sections", "--json", "--no-progress", "--out", str(tmp_path)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert list(out) == ["locomo"] and out["locomo"]["questions"] == 5
    files = out["locomo"]["chunk"]["files"]
    assert files["conversations"] == 1 and files["mean"] == files["pooled"]
    assert 0 <= files["mean"]["any@1"] <= files["mean"]["any@10"] <= 1
    record = json.loads((tmp_path / "retrieval.json").read_text())
    assert record["benchmarks"]["locomo"]["per_conversation"][0]["conversation"] == "conv-26"
    assert (tmp_path / "retrieval.png").stat().st_size > 0 and record["reused"] == []
    again = CliRunner().invoke(cli, args)  # a second run of the same settings reads conv-26 back
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == out
    assert json.loads((tmp_path / "retrieval.json").read_text())["reused"] == ["locomo conv-26"]
    # a run recorded before `files` was the study's name for it spelled it bm25-files: the old
    # spelling still parses, and the old record is read back under the new name
    cached = tmp_path / "conversations" / "locomo-conv-26.json"
    cached.write_text(cached.read_text().replace('"files"', '"bm25-files"'))
    assert '"bm25-files"' in cached.read_text()
    old = [a.replace("files,bm25", "bm25-files,bm25") for a in args]
    again = CliRunner().invoke(cli, old)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == out
    assert json.loads((tmp_path / "retrieval.json").read_text())["reused"] == ["locomo conv-26"]


def test_a_resume_record_reads_back_as_the_result_it_was() -> None:
    """A run resumes from `raw`'s record written as JSON: reading it back gives the same figures."""
    fig = Figures(3, {"any@5": 2.0}, {"single-hop": [3, 2]}, 0.5, [0.01, 0.02, 0.03])
    result = ConversationResult("locomo", "conv-1", 4, {"bm25": fig}, {"dump": {"bm25": fig}}, {"dump": 1.5})
    assert from_raw(json.loads(json.dumps(raw(result)))) == result
    old = json.loads(json.dumps(raw(result)).replace('"bm25"', '"bm25-files"', 1))
    assert list(from_raw(old).chunk) == ["files"]  # recorded under the study's old name
    with pytest.raises(KeyError):
        from_raw({k: v for k, v in raw(result).items() if k != "sections"})
