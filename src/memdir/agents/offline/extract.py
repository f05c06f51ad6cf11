"""Keyed facts the offline curator reads off a turn: first-person patterns ("I live in Boston",
"I now prefer tea") that name an attribute and a value.

Kept apart from the curator's filing so what counts as a keyed fact has one home, which the
filer (and any other curation) calls rather than re-deriving.
"""

from __future__ import annotations

import re

from memdir.conventions import key_of

_STOPS = "and|but|because|since|so|which|for|with|after|when|now|over|than|instead|rather"
_END = rf"(?=\s*(?:[.,;!?]|\b(?:{_STOPS})\b|$))"
_VALUE = r"(?P<value>[A-Za-z0-9][^.,;!?]{0,60}?)" + _END
KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (attr, re.compile(rx, re.IGNORECASE))
    for attr, rx in (
        (
            "favorite {what}",
            r"\bmy (?:new )?fav(?:ou?rite)? (?P<what>[a-z]+(?: [a-z]+)?) is (?:now )?" + _VALUE,
        ),
        ("home", r"\bI(?:'ve| have)? (?:now |just |recently )?(?:live|moved|relocated) (?:in|to) " + _VALUE),
        ("job", r"\bI(?:'m| am)? (?:now |currently )?(?:work(?:ing)?|employed) as (?:an? )?" + _VALUE),
        ("job", r"\bmy (?:new )?job is (?:now )?(?:an? )?" + _VALUE),
        ("diet", r"\bI(?:'m| am) (?:now |currently )?(?:a )?(?P<value>vegan|vegetarian|pescatarian|keto)\b"),
        ("preference", r"\bI (?:now |currently |really )?(?:prefer|like|love|enjoy) " + _VALUE),
    )
)


def keyed_facts(text: str) -> list[tuple[str, str]]:
    """(attribute, value) pairs a turn states about its speaker; one per attribute, first wins."""
    found: dict[str, str] = {}
    for attr_t, rx in KEY_PATTERNS:
        for m in rx.finditer(text):
            groups = m.groupdict()
            attr = key_of("", attr_t.format(what=groups.get("what") or ""))[1]
            value = re.sub(r"\s+", " ", groups["value"]).strip(" '\"")
            if value and attr not in found:
                found[attr] = value
    return list(found.items())
