"""The secret scanner (store/secrets.py): what it finds, how it writes it, what it keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.errors import MemdirError
from memdir.store import secrets_allow
from memdir.store.secrets import luhn, redact, redact_bytes, scan

FOUND = [
    ("openai-key", "sk-proj-Q7wErTy8UiOp9AsDfGh0JkLzXcVbNm1234QwErTyUi"),
    ("anthropic-key", "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-_zyxw"),
    ("aws-key", "AKIAZ7Q2M4N6P8R0T2V4"),
    ("github-token", "github_pat_11AbCdEfG0123456789_aBcDeFgHiJkLmNoPqRsTuV"),
    ("slack-token", "xoxb-2048-4096-AbCdEfGhIjKlMnOp"),
    ("stripe-key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("google-api-key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("card-number", "5555 5555 5555 4444"),
]


@pytest.mark.parametrize(("kind", "secret"), FOUND)
def test_each_kind_is_found_inside_a_sentence_and_written_as_its_kind(kind: str, secret: str) -> None:
    text, hits = redact(f"Here it is: {secret}. Keep it safe!")
    assert text == f"Here it is: [redacted: {kind}]. Keep it safe!"
    assert [h.kind for h in hits] == [kind] and secret not in repr(hits)


def test_a_private_key_goes_whole_and_a_db_url_keeps_all_but_its_password() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nq9Zx\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{block}\nthanks")[0] == "key:\n[redacted: private-key]\nthanks"
    url = "postgres://app:Hunter2Blue@db.internal:5432/main"
    assert redact(url)[0] == "postgres://app:[redacted: url-password]@db.internal:5432/main"


def test_spoken_passwords_count_only_when_the_value_looks_made() -> None:
    assert (
        redact("the wifi password is Sunsh1ne!42, enjoy")[0]
        == "the wifi password is [redacted: password], enjoy"
    )
    assert redact('My bank password: "correct horse"')[0] == "My bank password: [redacted: password]"
    for prose in (
        "my password is on the fridge",
        "I noticed a spiderman pin on your purse. Is Spider-Man your favorite?",
        "I called 555-123-4567 and paid 1,234,567 dollars in 2023",
        "Card 4242 4242 4242 4241 fails the checksum",
    ):
        assert scan(prose) == [], prose


def test_a_spoken_password_of_one_plain_word_counts_when_it_ends_the_clause() -> None:
    """ "The password is sunflower." is a password said aloud; "my password is simple", "the
    password is too long to remember" and "my password is weak." say what it is like."""
    for said, word in (
        ("the wifi password is sunflower", "sunflower"),
        ("Our wifi password is bluebird, enjoy!", "bluebird"),
        ("ok the door code is pineapple.", "pineapple"),
        ("Login: marigold", "marigold"),
    ):
        assert redact(said)[0] == said.replace(word, "[redacted: password]"), said
    for prose in (
        "my password is simple",
        "my password is weak.",
        "the password is too long to remember",
        "the password is expired, I need a new one",
        "the password is written on the back of the router",
        "My password is different for every site!",
        "the password is something only we know",
    ):
        assert scan(prose) == [], prose


def test_luhn_and_bytes_that_are_not_utf8_are_kept() -> None:
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    data = b"\xff\xfe key AKIAZ7Q2M4N6P8R0T2V4 \xff"
    assert redact_bytes(data)[0] == b"\xff\xfe key [redacted: aws-key] \xff"


def test_the_allowlist_keeps_a_keyed_digest_not_the_text(tmp_path: Path) -> None:
    card = "5555 5555 5555 4444"
    digest = secrets_allow.allow(tmp_path, card, "payment docs example")
    allowed = secrets_allow.allowed_in(tmp_path)
    assert allowed(card) and not allowed("4111 1111 1111 1111")
    kept = secrets_allow.path(tmp_path).read_text()
    assert digest in kept and card not in kept and "5555" not in kept
    assert redact(f"pay with {card}", allowed)[0] == f"pay with {card}"
    with pytest.raises(MemdirError, match="one line"):
        secrets_allow.allow(tmp_path, "a\nb")
