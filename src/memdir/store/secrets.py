"""Secrets found in text, and the text with each written as `[redacted: kind]` (docs/secrets.md).

Every byte memdir writes into a memory root passes `redact` first (`safefs.SafeRoot.write`, the
landing intent record, ingested turns, run records), so a key pasted into a chat never reaches a
file, a journal object or the search index. The formats a maintained detector knows are its:
detect-secrets' plugin classes, run on the string as published (their own validation included,
e.g. a JWT's parts must decode). Its entropy and keyword plugins are left out: they are built for
source code, and on chat they flag ordinary words (benchmarks/results/2026-12-06-secrets.md).
What it lacks is written here (`_OWN` and below): today's OpenAI and Anthropic keys, Google API
keys, fine-grained GitHub tokens, an AWS secret access key beside its key id or the word secret,
a URL's password typed with reserved characters, card numbers (Luhn-checked), and passwords
spoken in a sentence ("the wifi password is ...").
A hit keeps its kind and place, never the text, so no repr or log line can carry the secret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

REDACTED = "[redacted: {kind}]"

# detect-secrets' plugins (class name -> the kind memdir calls it). Left out: the entropy and
# keyword plugins (above) and the public IP one (an address is not a credential).
_PLUGINS: dict[str, str] = {
    "ArtifactoryDetector": "artifactory-token",
    "AWSKeyDetector": "aws-key",
    "AzureStorageKeyDetector": "azure-storage-key",
    "BasicAuthDetector": "url-password",
    "CloudantDetector": "cloudant-key",
    "DiscordBotTokenDetector": "discord-token",
    "GitHubTokenDetector": "github-token",
    "GitLabTokenDetector": "gitlab-token",
    "IbmCloudIamDetector": "ibm-key",
    "IbmCosHmacDetector": "ibm-key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp-key",
    "NpmDetector": "npm-token",
    "OpenAIDetector": "openai-key",
    "PrivateKeyDetector": "private-key",
    "PypiTokenDetector": "pypi-token",
    "SendGridDetector": "sendgrid-key",
    "SlackDetector": "slack-token",
    "SoftlayerDetector": "softlayer-key",
    "SquareOAuthDetector": "square-secret",
    "StripeDetector": "stripe-key",
    "TelegramBotTokenDetector": "telegram-token",
    "TwilioKeyDetector": "twilio-key",
}
# Kinds whose secrets may be shorter than _LONG: every other detector runs only on a text that
# holds a token at least that long, which ordinary prose seldom does (most of a scan's cost).
_SHORT = frozenset({"url-password", "private-key", "artifactory-token", "slack-token", "npm-token"})
_LONG = re.compile(r"[A-Za-z0-9_\-+/=]{20}")
# Words a detector cannot match without (its pattern needs one of them, in any case): one
# `in` test on the lowered text spares a regex pass over text that has none (chat mostly).
_KEYWORD = ("key", "pw", "pass", "token", "secret")
_GATES: dict[str, tuple[str, ...]] = {
    "cloudant-key": (*_KEYWORD, "cloudant"),
    "ibm-key": _KEYWORD,
    "softlayer-key": (*_KEYWORD, "softlayer"),
    "mailchimp-key": ("-us",),
    "stripe-key": ("k_live_", "k_test_"),
    "telegram-token": (":",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "google-api-key": ("aiza",),
    "github-token": ("github_pat_", "gh"),
    "aws-secret-key": ("aws", "secret", "akia", "asia", "a3t"),
    "url-password": ("://",),
    "private-key": ("private key", "putty-user-key"),
    "slack-token": ("xox", "hooks.slack.com"),
    "npm-token": ("_authtoken",),
    "artifactory-token": ("akc", "ap"),
}
# The shape of the value a keyword-assignment detector captures: its pattern backtracks over
# every keyword it meets, so it runs only where such a value stands at all.
_SHAPES: dict[str, re.Pattern[str]] = {
    "cloudant-key": re.compile(r"[0-9a-f]{64}|[a-z]{24}"),
    "softlayer-key": re.compile(r"[a-z0-9]{64}"),
    "ibm-key": re.compile(r"[A-Za-z0-9_\-]{44}"),
    "artifactory-token": re.compile(r"AKC|AP[0-9A-F]"),
}
_SPOKEN_WORDS = (
    "pass",
    "pwd",
    "pin",
    "wifi",
    "wi-fi",
    "login",
    "access code",
    "door",
    "gate",
    "alarm",
    "garage",
)
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-.+/=]")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|---- END SSH2 ENCRYPTED PRIVATE KEY ----")
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|---- BEGIN SSH2")

# Own rules: (kind, pattern, group holding the secret).
_OWN: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("anthropic-key", re.compile(r"(?<![\w-])(sk-ant-[A-Za-z0-9_-]{20,})"), 1),
    ("openai-key", re.compile(r"(?<![\w-])(sk-(?!ant-)(?:[a-z]+-)?[A-Za-z0-9_-]{32,})"), 1),
    ("google-api-key", re.compile(r"(?<![\w-])(AIza[0-9A-Za-z_-]{35})(?![\w-])"), 1),
    ("github-token", re.compile(r"(?<!\w)(github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,})"), 1),
    ("stripe-key", re.compile(r"(?<!\w)((?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,})"), 1),
    (
        "aws-secret-key",
        re.compile(
            r"(?i)(?:aws|secret|(?:A3T[A-Z0-9]|AKIA|ASIA)[0-9A-Z]{16})[^\n]{0,40}?"
            r"(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        1,
    ),
    # A URL's password as people type it, reserved characters and all (`Pa$$word!`), which the
    # plugin's RFC-shaped pattern leaves alone.
    ("url-password", re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]{1,64}:([^\s@/]{1,128})@[\w.-]"), 1),
)
# A card number's digits, not inside a longer number (the character before is looked at apart:
# a pattern that opens with a look-behind is tried at every position of the text).
_CARD = re.compile(r"([2-6]\d{3}(?:[ -]?\d){9,15})(?![\d-])")
_NOT_BEFORE_CARD = frozenset("0123456789-")
# A password spoken in a sentence: the word, an optional "for the router", a verb or colon, and
# the value; it counts when the value looks made (a digit, a symbol, an inner capital, or
# quotes) or is one plain word ending the clause (`_plain_password`), so "the password is on
# the fridge" and "my password is simple" pass.
_SPOKEN = re.compile(
    r"(?i:pass(?:word|code|phrase|wd)|pwd|(pin)(?: code| number)?|wi-?fi (?:key|code)|"
    r"login|access code|(?:door|gate|alarm|garage) code)s?\b"
    r"(?:\s+(?i:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+|your\s+)?[\w'-]+(?:\s+[\w'-]+)?)?"
    r"\s*(?:is|was|:|=|-|'s|is now|became|changed to|set to)\s*(?:still\s+|just\s+)?"
    r"(\"[^\"\n]{4,64}\"|'[^'\n]{4,64}'|“[^”\n]{4,64}”|`[^`\n]{4,64}`|[^\s\"'`“]{4,64})"
)
_MADE = re.compile(r"\d|[^\w\s]|[a-z][A-Z]")
# One plain word is a password when it ends the clause ("the wifi password is sunflower.") and
# is not a word that says what the password is like: a describing suffix or one of these.
_PLAIN = re.compile(r"[A-Za-z]{4,64}")
_CLAUSE_END = re.compile(r"\s*(?:$|[.,;!?)\n])")
_DESCRIBING = re.compile(r"(?i).*(?:ly|ed|ing|ous|ful|less|able|ible|ive|ent|ant)$")
_NOT_A_PASSWORD = frozenset((
    "simple", "easy", "weak", "strong", "wrong", "right", "same", "long", "short", "secret",
    "private", "safe", "secure", "hard", "tough", "complex", "unknown", "blank", "empty",
    "none", "nothing", "something", "this", "that", "mine", "yours", "ours", "theirs",
    "here", "there", "gone", "fine", "okay", "great", "good", "bad", "awful", "terrible",
    "correct", "incorrect", "invalid", "valid", "stupid", "silly", "obvious", "lame",
    "funny", "cute",
))  # fmt: skip
_TRAIL = ".,;:!?)]}>"


@dataclass(frozen=True)
class SecretHit:
    """One secret in a text: its kind and where it is (characters), never its value."""

    kind: str
    start: int
    end: int

    def __repr__(self) -> str:
        return f"SecretHit({self.kind}, {self.start}:{self.end})"


@functools.cache
def _detectors() -> tuple[tuple[str, Callable[[str], Iterable[str]]], ...]:
    """detect-secrets' plugins, built once; imported on first use (it pulls in requests)."""
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    modules = (
        artifactory, aws, azure_storage_key, basic_auth, cloudant, discord, github_token,
        gitlab_token, ibm_cloud_iam, ibm_cos_hmac, jwt, mailchimp, npm, openai, private_key,
        pypi_token, sendgrid, slack, softlayer, square_oauth, stripe, telegram_token, twilio,
    )  # fmt: skip
    out: list[tuple[str, Callable[[str], Iterable[str]]]] = []
    for module in modules:
        for name, kind in _PLUGINS.items():
            cls = getattr(module, name, None)
            if cls is not None:
                out.append((kind, cls().analyze_string))
    return tuple(out)


@functools.cache
def _short_detectors() -> tuple[tuple[str, Callable[[str], Iterable[str]]], ...]:
    """The detectors whose secrets may be shorter than `_LONG`: all a text without a long
    token needs."""
    return tuple((kind, analyze) for kind, analyze in _detectors() if kind in _SHORT)


def luhn(digits: str) -> bool:
    """The card-number checksum: every second digit from the right doubled."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _occurrences(text: str, value: str) -> Iterator[tuple[int, int]]:
    """Each place `value` stands in `text` as a whole token (not inside a longer word)."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() and value[0].isalnum()) and not (after.isalnum() and value[-1].isalnum()):
            yield at, end
        at = text.find(value, at + 1)


def _extend(text: str, kind: str, start: int, end: int) -> tuple[int, int]:
    """A hit widened to the whole secret where the plugin yields only its head: a private key's
    block to its END line, a JWT to the end of its signature."""
    if kind == "private-key":
        line = text.rfind("\n", 0, start) + 1
        head = _KEY_BEGIN.search(text, line, end + 40)
        stop = _KEY_END.search(text, end)
        return (head.start() if head else start), (stop.end() if stop else len(text))
    if kind == "jwt":
        while end < len(text) and _TOKEN_CHAR.match(text[end]):
            end += 1
    return start, end


def _found(text: str) -> Iterator[SecretHit]:
    # A whitespace-split word of 20+ characters first (C speed), the exact token pattern after.
    long = max(map(len, text.split()), default=0) >= 20 and _LONG.search(text) is not None
    lowered = text.lower()
    passed: dict[str, bool] = {}

    def may(kind: str) -> bool:
        if kind not in passed:
            gate, shape = _GATES.get(kind), _SHAPES.get(kind)
            passed[kind] = (gate is None or any(w in lowered for w in gate)) and (
                shape is None or shape.search(text) is not None
            )
        return passed[kind]

    for kind, analyze in _detectors() if long else _short_detectors():
        if not may(kind):
            continue
        for value in set(analyze(text)):
            value = value.strip(" \t\"'")
            if len(value) < 4:
                continue
            for start, end in _occurrences(text, value):
                yield SecretHit(kind, *_extend(text, kind, start, end))
    for kind, pattern, group in _OWN:
        if (long or kind in _SHORT) and may(kind):
            for m in pattern.finditer(text):
                yield SecretHit(kind, m.start(group), m.end(group))
    for m in _CARD.finditer(text):
        if m.start() and text[m.start() - 1] in _NOT_BEFORE_CARD:
            continue  # inside a longer number
        digits = re.sub(r"[ -]", "", m.group(1))
        if 13 <= len(digits) <= 19 and luhn(digits) and len(set(digits)) > 1:
            yield SecretHit("card-number", m.start(1), m.end(1))
    yield from _spoken(text, lowered)


def _spoken(text: str, lowered: str) -> Iterator[SecretHit]:
    """Passwords said in a sentence: the pattern is tried only where one of its words starts a
    word (found by `str.find`, far cheaper than the pattern's own search over the text)."""
    starts = sorted(
        {i for w in _SPOKEN_WORDS for i in _finds(lowered, w) if i == 0 or not lowered[i - 1].isalnum()}
    )
    end = 0
    for at in starts:
        m = _SPOKEN.match(text, at) if at >= end else None
        if m is None:
            continue
        end = m.end()
        value = m.group(2)
        quoted = value[0] in "\"'“`"
        core = value.rstrip(_TRAIL) if not quoted else value
        if m.group(1) is not None and not core.isdigit():
            continue  # a PIN is digits: "pin on your purse" is a badge
        made = len(core) >= 4 and _MADE.search(core) and not core.startswith(("[", "http"))
        if quoted or made or _plain_password(core, text, m.start(2) + len(core)):
            yield SecretHit("password", m.start(2), m.start(2) + len(core))


def _plain_password(word: str, text: str, end: int) -> bool:
    """Is `word`, said as a password's value and ending at `end`, a password of one plain word?"""
    return (
        _PLAIN.fullmatch(word) is not None
        and _CLAUSE_END.match(text, end) is not None
        and word.lower() not in _NOT_A_PASSWORD
        and _DESCRIBING.fullmatch(word) is None
    )


def _finds(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def scan(text: str) -> list[SecretHit]:
    """The secrets in `text`, in order, overlapping hits merged (the first kind found wins)."""
    hits = sorted(_found(text), key=lambda h: (h.start, -h.end))
    merged: list[SecretHit] = []
    for h in hits:
        if merged and h.start < merged[-1].end:
            last = merged[-1]
            if h.end > last.end:
                merged[-1] = SecretHit(last.kind, last.start, h.end)
            continue
        merged.append(h)
    return merged


def redact(text: str, allowed: Callable[[str], bool] | None = None) -> tuple[str, list[SecretHit]]:
    """`text` with each secret written as `[redacted: kind]`, and the hits (places in the input);
    a secret `allowed` passes is kept as it is and not among the hits."""
    if not text:
        return text, []
    hits = [h for h in scan(text) if allowed is None or not allowed(text[h.start : h.end])]
    if not hits:
        return text, []
    parts: list[str] = []
    at = 0
    for h in hits:
        parts += [text[at : h.start], REDACTED.format(kind=h.kind)]
        at = h.end
    parts.append(text[at:])
    return "".join(parts), hits


def redact_bytes(data: bytes, allowed: Callable[[str], bool] | None = None) -> tuple[bytes, list[SecretHit]]:
    """`redact` over bytes, which need not be UTF-8 (what is not is kept byte for byte)."""
    text = data.decode("utf-8", "surrogateescape")
    out, hits = redact(text, allowed)
    return (out.encode("utf-8", "surrogateescape"), hits) if hits else (data, hits)


def said(kinds: Iterable[str]) -> str:
    """'2 secrets (openai-key, password)': how a reply or summary names what was redacted."""
    kinds = list(kinds)
    if not kinds:
        return ""
    names = ", ".join(sorted(set(kinds)))
    return f"{len(kinds)} secret{'s' * (len(kinds) != 1)} ({names})"
