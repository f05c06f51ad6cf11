"""Loaders on the real benchmark files (MEMDIR_DATA), PersonaMem on a synthetic shared-context
file in the upstream format, and the download fallback against a loopback HTTP server."""

from __future__ import annotations

import csv
import functools
import http.server
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memdir.stream import MAX_CHARS, MAX_TURNS, Turn, chunk_stream
from memdir_study.bench import DEFAULTS, load_sample, locomo, personamem, realtalk
from memdir_study.bench.data import DataUnavailable, UnknownSample, locate
from memdir_study.bench.evidence import parse_evidence

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("MEMDIR_DATA") or REPO.parent / "shared" / "data")
needs_data = pytest.mark.skipif(
    not (DATA / "locomo" / "locomo10.json").is_file(),
    reason=f"benchmark data not found at {DATA}; set MEMDIR_DATA to the shared data folder",
)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may reach the network or an old cache."""
    monkeypatch.setenv("MEMDIR_OFFLINE", "1")
    monkeypatch.setenv("MEMDIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMDIR_DATA", str(DATA))


def check_chunks(turns: list[Turn]) -> None:
    chunks = chunk_stream(turns)
    assert [t for c in chunks for t in c.turns] == turns
    assert [c.index for c in chunks] == list(range(1, len(chunks) + 1))
    for c in chunks:
        assert 1 <= len(c.turns) <= MAX_TURNS
        assert len({t.session for t in c.turns}) == 1
        assert c.chars <= MAX_CHARS or len(c.turns) == 1


# -- chunking ------------------------------------------------------------------------------
def test_chunks_close_at_eight_turns_at_session_ends_and_before_passing_the_char_limit() -> None:
    turns = [Turn(f"S1T{i}", "a", "x" * 10) for i in range(1, 11)]
    turns += [Turn("S2T1", "b", "y" * 1500), Turn("S2T2", "b", "y" * 1400), Turn("S2T3", "b", "y" * 200)]
    turns += [Turn("S3T1", "c", "z" * 5000), Turn("S3T2", "c", "z")]
    chunks = chunk_stream(turns)
    assert [c.locators for c in chunks] == [
        [f"S1T{i}" for i in range(1, 9)],
        ["S1T9", "S1T10"],
        ["S2T1", "S2T2"],  # 2,900 chars; the third turn would pass 3,000
        ["S2T3"],
        ["S3T1"],  # one oversized turn is a chunk of its own
        ["S3T2"],
    ]
    assert chunks[2].render().startswith("[S2T1] b: yyy")


def test_turn_session_comes_from_the_locator() -> None:
    assert Turn("S12T3", "a", "").session == 12
    assert Turn("B3M40", "a", "").session == 3
    with pytest.raises(ValueError, match="locator"):
        _ = Turn("D1:3", "a", "").session


def test_evidence_is_parsed_leniently() -> None:
    assert parse_evidence(["D5:3.", "D5:12;D5:16", "D:11:26", "D", "D30:05"]) == [
        "S5T3",
        "S5T12",
        "S5T16",
        "S11T26",
        "S30T5",
    ]
    assert parse_evidence(["D12:3-D12:5", "D13:45:D20:19", "D8:6; D9:17", "D1:2 D1:4"]) == [
        "S12T3",
        "S12T4",
        "S12T5",
        "S13T45",
        "S20T19",
        "S8T6",
        "S9T17",
        "S1T2",
        "S1T4",
    ]


# -- LoCoMo ----------------------------------------------------------------------------------
@needs_data
def test_locomo_conv50_counts_categories_and_defective_golds() -> None:
    s = locomo.load()
    assert (s.benchmark, s.id, s.speakers) == ("locomo", "conv-50", ["Calvin", "Dave"])
    assert len(s.turns) == 568 and len(s.session_dates) == 30
    assert len(s.questions) == 158
    assert s.categories() == {"multi-hop": 32, "temporal": 32, "open-domain": 7, "single-hop": 87}
    assert [q.order for q in s.questions] == list(range(1, 159))
    bad = [q for q in s.questions if q.defective]
    assert [q.order for q in bad] == [20, 64, 112, 138]
    assert bad[2].question == "Which Disney movie did Dave mention as one of his favorites?"
    assert s.defective_ids() == [q.id for q in bad] and bad[0].id == "conv-50-q20"
    assert s.unresolved_evidence() == {}  # D30:05 resolves to S30T5
    check_chunks(s.turns)


@needs_data
def test_locomo_turns_have_locators_iso_dates_and_photo_captions() -> None:
    s = locomo.load("conv-50")
    assert s.session_dates[1] == "2023-03-23" and s.session_dates[30] == "2023-11-17"
    t = s.turns[2]
    assert t.locator == "S1T3" and t.speaker == "Calvin" and t.date == "2023-03-23"
    assert t.text.endswith("[shares a photo: a photo of a building with a sign on the front of it]")
    q = next(q for q in s.questions if q.order == 20)
    assert q.category == "multi-hop" and q.category_code == 1 and q.evidence == ("S3T1", "S12T7", "S24T19")


@needs_data
def test_locomo_other_conversations_and_unknown_id() -> None:
    s = locomo.load("conv-26")
    assert len(s.questions) == 152 and not any(q.defective for q in s.questions)
    assert len(locomo.load("conv-50", include_adversarial=True).questions) == 204
    with pytest.raises(UnknownSample, match="conv-50"):
        locomo.load("conv-99")


# -- REALTALK --------------------------------------------------------------------------------
@needs_data
def test_realtalk_chat10_gives_85_questions_and_93_chunks() -> None:
    s = realtalk.load()
    assert s.id == "Chat_10_Fahim_Muhhamed" and s.speakers == ["Fahim Khan", "Muhhamed"]
    assert len(s.turns) == 662 and len(s.session_dates) == 20
    assert s.categories() == {"temporal": 45, "multi-hop": 30, "commonsense": 10}
    assert len(s.chunks()) == 93
    check_chunks(s.turns)
    assert s.turns[0].date == "2023-12-29" and s.session_dates[20] == "2024-01-21"
    # Two evidence ids name messages that the preprocessed file dropped (its dia_ids have gaps).
    assert s.unresolved_evidence() == {
        "Chat_10_Fahim_Muhhamed-q49": ["S15T2"],
        "Chat_10_Fahim_Muhhamed-q72": ["S18T8"],
    }
    ranged = [q for q in s.questions if len(q.evidence) > 2]
    assert ranged, "range evidence such as D12:3-D12:5 expands to every turn"


@needs_data
def test_realtalk_every_chat_loads_with_its_question_count() -> None:
    counts = {sid: len(realtalk.load(sid).questions) for sid in realtalk.sample_ids()}
    assert list(counts.values()) == [70, 73, 71, 70, 76, 70, 72, 71, 70, 85]
    with pytest.raises(UnknownSample, match="Chat_10_Fahim_Muhhamed"):
        realtalk.load("Chat_11_Nobody")


# -- PersonaMem ------------------------------------------------------------------------------
@needs_data
def test_personamem_question_batteries_from_the_real_csv() -> None:
    sizes = {sid: len(personamem.load_questions(sid)[1]) for sid in personamem.SAMPLES[:3]}
    assert sizes == {
        "pm_32k_18_246eaab7_e185": 10,
        "pm_32k_19_4b3812ac_e152": 10,
        "pm_32k_19_947ec42f_e152": 12,
    }
    cid, qs = personamem.load_questions("pm_32k_19_947ec42f_e152")
    assert cid.startswith("947ec42fcf5d")
    assert all(len(q.options or ()) == 4 and q.gold in ("(a)", "(b)", "(c)", "(d)") for q in qs)


@needs_data
def test_personamem_missing_files_are_named_with_where_to_get_them() -> None:
    with pytest.raises(personamem.PersonaMemMissing) as err:
        personamem.load("pm_32k_18_246eaab7_e185")
    msg = str(err.value)
    assert "shared_contexts_32k.jsonl" in msg and "bowen-upenn/PersonaMem" in msg and "MEMDIR_DATA" in msg
    with pytest.raises(DataUnavailable, match=r"questions_128k\.csv"):
        personamem.load("pm_128k_18_43642c89_e784")
    with pytest.raises(UnknownSample, match="pm_<tier>"):
        personamem.load("pm_bogus")


CTX = "246eaab7" + "0" * 56


def write_personamem(root: Path) -> None:
    """A tiny questions file and shared-context file in the upstream formats."""
    (root / "personamem").mkdir(parents=True)
    header = [
        "persona_id",
        "question_id",
        "question_type",
        "topic",
        "context_length_in_tokens",
        "context_length_in_letters",
        "distance_to_ref_in_blocks",
        "distance_to_ref_in_tokens",
        "num_irrelevant_tokens",
        "distance_to_ref_proportion_in_context",
        "user_question_or_message",
        "correct_answer",
        "all_options",
        "shared_context_id",
        "end_index_in_shared_context",
    ]
    opts_py = str(["(a) jazz", "(b) Kanoa's vinyl", "(c) rock", "(d) pop"])
    opts_json = json.dumps(["(a) one", "(b) two", "(c) three", "(d) four"])

    def row(qid: str, qtype: str, text: str, gold: str, options: str, end: str) -> list[str]:
        return ["18", qid, qtype, "music", "1", "1", "0", "1", "0", "1%", text, gold, options, CTX, end]

    rows = [
        row("q-1", "recall_user_shared_facts", "What do I like?", "(b)", opts_py, "7"),
        row("q-2", "suggest_new_ideas", "Any idea?", "(c)", opts_json, "7"),
        row("q-3", "suggest_new_ideas", "Earlier?", "(a)", opts_json, "4"),
    ]
    with (root / "personamem" / "questions_32k.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    messages = [
        {"role": "system", "content": "Current user persona: Name: Kanoa Manu"},
        {"role": "user", "content": "Patient: I love vinyl records. (03/14/2024)"},
        {"role": "assistant", "content": "Therapist: Tell me more."},
        {"role": "user", "content": "Patient: They calm me."},
        {"role": "user", "content": "User: Recommend me some music."},
        {"role": "assistant", "content": "Assistant: Try Led Zeppelin IV on vinyl. (05/01/2024)"},
        {"role": "system", "content": "A new session begins."},
        {"role": "user", "content": "User: beyond the prefix"},
    ]
    other = {"ffff" + "0" * 60: [{"role": "system", "content": "someone else"}]}
    with (root / "personamem" / "shared_contexts_32k.jsonl").open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(other) + "\n")
        fh.write(json.dumps({CTX: messages}) + "\n")


def test_personamem_loader_on_a_synthetic_shared_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_personamem(tmp_path)
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path))
    s = personamem.load("pm_32k_18_246eaab7_e7")
    assert s.benchmark == "personamem" and len(s.turns) == 7  # the prefix up to the end index
    assert [t.locator for t in s.turns] == ["B1M1", "B1M2", "B1M3", "B1M4", "B2M5", "B2M6", "B3M7"]
    assert [t.speaker for t in s.turns[:3]] == ["system", "Patient", "Therapist"]
    assert s.turns[1].text == "I love vinyl records. (03/14/2024)" and s.turns[1].date == "2024-03-14"
    assert s.session_dates == {1: "2024-03-14", 2: "2024-05-01", 3: None}
    assert [q.id for q in s.questions] == ["q-1", "q-2"]
    assert s.questions[0].options == ("(a) jazz", "(b) Kanoa's vinyl", "(c) rock", "(d) pop")
    assert s.questions[1].options == ("(a) one", "(b) two", "(c) three", "(d) four")
    assert s.questions[0].gold == "(b)" and s.questions[0].category == "recall_user_shared_facts"
    assert len(personamem.load("pm_32k_18_246eaab7_e4").turns) == 4
    with pytest.raises(UnknownSample, match="no rows"):
        personamem.load("pm_32k_18_246eaab7_e5")


# -- download fallback -----------------------------------------------------------------------
@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "served"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()


def test_missing_file_is_downloaded_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http_root: tuple[str, Path]
) -> None:
    base, served = http_root
    (served / "locomo10.json").write_text('[{"sample_id": "conv-1"}]')
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path / "empty"))
    monkeypatch.delenv("MEMDIR_OFFLINE")
    got = locate("locomo/locomo10.json", f"{base}/locomo10.json")
    assert got == tmp_path / "cache" / "data" / "locomo" / "locomo10.json"
    assert got.read_text() == '[{"sample_id": "conv-1"}]'
    (served / "locomo10.json").unlink()
    assert locate("locomo/locomo10.json", f"{base}/locomo10.json") == got  # from the cache now
    with pytest.raises(DataUnavailable) as err:
        locate("realtalk/Chat_1.json", f"{base}/nothing.json")
    assert f"{base}/nothing.json" in str(err.value) and "MEMDIR_DATA" in str(err.value)
    assert not list((tmp_path / "cache" / "data").rglob("*.part")), "a failed download leaves nothing"


def test_offline_without_data_names_the_url_and_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMDIR_DATA", str(tmp_path / "empty"))
    with pytest.raises(DataUnavailable) as err:
        locomo.load()
    msg = str(err.value)
    assert "raw.githubusercontent.com/snap-research/LoCoMo/3eb6f2c5" in msg
    assert "MEMDIR_DATA" in msg and "MEMDIR_OFFLINE" in msg


@needs_data
def test_load_sample_reaches_every_benchmark() -> None:
    assert load_sample("locomo").id == "conv-50"
    assert len(load_sample("realtalk").questions) == 85
    assert load_sample("generated").benchmark == "generated"
    assert set(DEFAULTS) == {"locomo", "realtalk", "personamem", "generated"}
    with pytest.raises(UnknownSample, match="choose one of"):
        load_sample("babi")
