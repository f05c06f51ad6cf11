"""The text a reply's schema forces next (`models/forced.py`), which the local model's server
drafts and verifies in one batch. A draft the model would not write costs a wasted batch; a
draft of text the schema does not force would be rejected only by the grammar. So the forced
text must be exactly what the schema leaves no choice over, and nothing where the model chooses."""

from __future__ import annotations

import json

from memdir.agents.split.extract import key, schema
from memdir.models.forced import forced_text
from memdir.stream import Chunk, Turn

NORA = Turn("S1T1", "Nora", "I started as a nurse.")
SAM = Turn("S1T2", "Sam", "Congrats! Any plans?")  # asks, says nothing of Sam: its list held empty
TIM = Turn("S1T3", "Tim", "I run.")
CHUNK = Chunk(1, (NORA, SAM, TIM))
SCHEMA = schema(CHUNK)
K1, K2, K3 = (f'"{key(t)}": ' for t in CHUNK.turns)
FACT = '{"value": "started as a nurse", "subject": "Nora", "kind": "fact", "attribute": "job", "date": ""}'
TIMS = '{"value": "run", "subject": "Tim", "kind": "preference", "attribute": "sport", "date": ""}'
REPLY = "{" + K1 + "[" + FACT + "], " + K2 + "[], " + K3 + "[" + TIMS + "]}"


def test_the_keys_and_brackets_after_a_value_are_forced_up_to_the_next_choice() -> None:
    assert forced_text(SCHEMA, "") == "{" + K1 + "["
    assert forced_text(SCHEMA, "{") == K1 + "["
    assert K1 == '"S1T1 Nora: I started as a nurse.": '  # the turn's locator, speaker, first words
    assert forced_text(SCHEMA, "{" + K1 + "[{") == '"value": "'
    # The subject is the turn's speaker: forced, and what the schema forces after it too.
    assert (
        forced_text(SCHEMA, "{" + K1 + '[{"value": "started as a nurse"') == ', "subject": "Nora", "kind": "'
    )
    assert (
        forced_text(SCHEMA, "{" + K1 + '[{"value": "started as a nurse",') == ' "subject": "Nora", "kind": "'
    )
    assert (
        forced_text(SCHEMA, "{" + K1 + '[{"value": "started as a nurse", "sub') == 'ject": "Nora", "kind": "'
    )
    # The last field closes the fact; whether another fact or the list's end follows is a choice.
    assert forced_text(SCHEMA, "{" + K1 + "[" + FACT[:-1]) == "}"
    # A turn's list closed: the next turn's key, in the chunk's order; a list held empty is
    # forced whole, and the key after it.
    assert forced_text(SCHEMA, "{" + K1 + "[" + FACT + "]") == ", " + K2 + "[], " + K3 + "["
    assert forced_text(SCHEMA, REPLY[:-1]) == "}"


def test_nothing_is_forced_where_the_model_chooses() -> None:
    for prefix in (
        "{" + K1 + "[",  # a fact or an empty list
        "{" + K1 + '[{"value": "',  # inside a value
        "{" + K1 + '[{"value": "star',
        "{" + K1 + '[{"value": "started as a nurse", "subject": "Nora", "kind": "',  # one of the kinds
        "{" + K1 + "[" + FACT,  # another fact or the list's end
        REPLY,  # the reply is whole
    ):
        assert forced_text(SCHEMA, prefix) == "", prefix


def test_a_full_list_is_closed_and_escaped_quotes_stay_inside_the_string() -> None:
    three = ", ".join([FACT] * 3)
    assert forced_text(SCHEMA, "{" + K1 + "[" + three) == "], " + K2 + "[], " + K3 + "["
    assert forced_text(SCHEMA, "{" + K1 + '[{"value": "Nora \\"') == ""
    assert forced_text(SCHEMA, "{" + K1 + '[{"value": "Nora \\""') == ', "subject": "Nora", "kind": "'


def test_every_forced_text_is_what_a_whole_reply_goes_on_with() -> None:
    """Walked through a reply held to the schema, each forced text is the reply's next text."""
    assert json.loads(REPLY)
    for i in range(len(REPLY)):
        forced = forced_text(SCHEMA, REPLY[:i])
        assert REPLY[i:].startswith(forced), (REPLY[:i], forced)
