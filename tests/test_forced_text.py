"""The text a reply's schema forces next (`models/forced.py`), which the local model's server
drafts and verifies in one batch. A draft the model would not write costs a wasted batch; a
draft of text the schema does not force would be rejected only by the grammar. So the forced
text must be exactly what the schema leaves no choice over, and nothing where the model chooses."""

from __future__ import annotations

import json

from memdir.agents.split.extract import schema
from memdir.models.forced import forced_text
from memdir.stream import Chunk, Turn

CHUNK = Chunk(1, (Turn("S1T1", "Nora", "I started as a nurse."), Turn("S1T2", "Sam", "Congrats!")))
SCHEMA = schema(CHUNK)
FACT = '{"subject": "Nora", "kind": "fact", "attribute": "job", "value": "started as a nurse", "date": ""}'
REPLY = '{"S1T1": [' + FACT + '], "S1T2": []}'


def test_the_keys_and_brackets_after_a_value_are_forced_up_to_the_next_choice() -> None:
    assert forced_text(SCHEMA, "") == '{"S1T1": ['
    assert forced_text(SCHEMA, "{") == '"S1T1": ['
    assert forced_text(SCHEMA, '{"S1T1": [{') == '"subject": "'
    assert forced_text(SCHEMA, '{"S1T1": [{"subject": "Nora"') == ', "kind": "'
    assert forced_text(SCHEMA, '{"S1T1": [{"subject": "Nora",') == ' "kind": "'
    assert forced_text(SCHEMA, '{"S1T1": [{"subject": "Nora", "ki') == 'nd": "'
    # The last field closes the fact; whether another fact or the list's end follows is a choice.
    assert forced_text(SCHEMA, '{"S1T1": [' + FACT[:-1]) == "}"
    # A turn's list closed: the next turn's key, in the chunk's order.
    assert forced_text(SCHEMA, '{"S1T1": [' + FACT + "]") == ', "S1T2": ['
    assert forced_text(SCHEMA, '{"S1T1": [' + FACT + '], "S1T2": []') == "}"


def test_nothing_is_forced_where_the_model_chooses() -> None:
    for prefix in (
        '{"S1T1": [',  # a fact or an empty list
        '{"S1T1": [{"subject": "',  # inside a value
        '{"S1T1": [{"subject": "No',
        '{"S1T1": [{"subject": "Nora", "kind": "',  # one of the kinds
        '{"S1T1": [' + FACT,  # another fact or the list's end
        REPLY,  # the reply is whole
    ):
        assert forced_text(SCHEMA, prefix) == "", prefix


def test_a_full_list_is_closed_and_escaped_quotes_stay_inside_the_string() -> None:
    three = ", ".join([FACT] * 3)
    assert forced_text(SCHEMA, '{"S1T1": [' + three) == '], "S1T2": ['
    assert forced_text(SCHEMA, '{"S1T1": [{"subject": "Nora \\"') == ""
    assert forced_text(SCHEMA, '{"S1T1": [{"subject": "Nora \\""') == ', "kind": "'


def test_every_forced_text_is_what_a_whole_reply_goes_on_with() -> None:
    """Walked through a reply held to the schema, each forced text is the reply's next text."""
    assert json.loads(REPLY)
    for i in range(len(REPLY)):
        forced = forced_text(SCHEMA, REPLY[:i])
        assert REPLY[i:].startswith(forced), (REPLY[:i], forced)
