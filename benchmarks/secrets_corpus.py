"""Secrets never land (issue 49, item 2; docs/secrets.md): a generated corpus of secrets inside
ordinary chat turns, ingested offline into fresh stores, then every file under each root and
every journal object searched byte for byte; and the false-positive pass over every turn of
LoCoMo and REALTALK; and the scan's cost on a 10 KB file.

    MEMDIR_DATA=... python benchmarks/secrets_corpus.py [--seed 49] [--per-kind 4]

The corpus is deterministic for a seed: fake but format-valid keys (right prefixes, lengths and
alphabets; card numbers pass Luhn; JWT parts decode; key blocks are PEM-shaped), each in a chat
turn written the way people paste them. Three stores take it: `memdir ingest --strategy dump`
(the turns verbatim), the same file curated by the offline model, and every secret turn written
through the `create` tool. Landed counts are per corpus kind (a key pair is two secrets; a key
block counts as landed if any line of its body is found).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import string
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from _common import REPO  # noqa: F401  (puts src/ on sys.path)
from click.testing import CliRunner

from memdir import Memory
from memdir.chatlogs.dialogues import locomo_turns, realtalk_turns
from memdir.cli.main import cli
from memdir.store.secrets import redact, scan
from memdir.store.traces import traces
from memdir.stream import Turn

ALNUM = string.ascii_letters + string.digits
FILLER = [
    "Morning! Did you end up going to the farmers market on Saturday?",
    "Yes, got some amazing peaches. We should make that cobbler again.",
    "I'm still tired from the trip, the flight back was delayed three hours.",
    "Remind me to call my sister about her birthday next week.",
    "The new project kicks off on Monday, I'm a bit nervous about it.",
    "We watched that documentary about octopuses, it was wonderful.",
    "Can you recommend a good book for the train ride?",
    "My dog finally learned to sit, only took four months.",
]
WRAPS = [
    "ok here it is so I don't lose it: {s}",
    "Saving this for later -> {s} (don't share please)",
    "For the record, {s}. Thanks for keeping track!",
    "Quick note before I forget\n{s}\nthat's all",
    "ugh I keep forgetting, it's {s} lol",
]


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def card(rng: random.Random, prefix: str, length: int) -> str:
    digits = prefix + rand(rng, length - len(prefix) - 1, string.digits)
    for check in string.digits:
        total = 0
        for i, ch in enumerate(reversed(digits + check)):
            d = int(ch) * (2 if i % 2 else 1)
            total += d - 9 if d > 9 else d
        if total % 10 == 0:
            number = digits + check
            return " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    raise AssertionError("a check digit always exists")


def key_block(rng: random.Random, label: str) -> tuple[str, list[str]]:
    body = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(6)]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body


def password(rng: random.Random) -> str:
    words = ["Blue", "Otter", "Maple", "River", "Cobalt", "Tiger", "Ember", "Lunar"]
    first, second = rng.choice(words), rng.choice(words).lower()
    return f"{first}{rng.choice('-_.!')}{second}{rng.randint(10, 99)}{rng.choice('!#$%')}"


def make(kind: str, rng: random.Random) -> tuple[str, list[str]]:
    """(the sentence holding the secret, the secrets in it as needles)."""
    if kind == "openai":
        s = "sk-proj-" + rand(rng, 48, ALNUM + "_-")
        return f"my openai key is {s}", [s]
    if kind == "anthropic":
        s = "sk-ant-api03-" + rand(rng, 86, ALNUM + "_-") + "AA"
        return f"anthropic key: {s}", [s]
    if kind == "aws-pair":
        kid = "AKIA" + rand(rng, 16, string.ascii_uppercase + "234567")
        sec = rand(rng, 40, ALNUM + "/+")
        return f"aws access key id {kid} and the secret access key {sec}", [kid, sec]
    if kind == "github-classic":
        s = "ghp_" + rand(rng, 36)
        return f"github token {s}", [s]
    if kind == "github-fine":
        s = "github_pat_" + rand(rng, 22) + "_" + rand(rng, 59)
        return f"the new fine-grained PAT is {s}", [s]
    if kind == "slack":
        s = f"xoxb-{rng.randint(10**10, 10**11)}-{rng.randint(10**12, 10**13)}-{rand(rng, 24)}"
        return f"slack bot token {s}", [s]
    if kind == "stripe":
        s = "sk_live_" + rand(rng, 24)
        return f"stripe live key {s}", [s]
    if kind == "google":
        s = "AIza" + rand(rng, 35, ALNUM + "_-")
        return f"google maps api key {s}", [s]
    if kind == "jwt":
        head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = b64url(
            json.dumps({"sub": str(rng.randint(1, 10**9)), "name": "Sam", "iat": 1716239022}).encode()
        )
        s = f"{head}.{body}.{b64url(rng.randbytes(32))}"
        return f"session token from the app: {s}", [s]
    if kind in ("openssh-key", "rsa-key"):
        label = "OPENSSH PRIVATE KEY" if kind == "openssh-key" else "RSA PRIVATE KEY"
        block, body = key_block(rng, label)
        return f"here's my deploy key\n{block}", body
    if kind == "card":
        prefix, length = rng.choice([("4", 16), ("51", 16), ("37", 15), ("6011", 16)])
        s = card(rng, prefix, length)
        return f"my card is {s} exp 09/28", [s]
    if kind == "wifi-password":
        s = password(rng)
        return f"the wifi password is {s}", [s]
    if kind == "account-password":
        s = password(rng)
        site = rng.choice(["netflix", "the bank", "my email", "the school portal"])
        return f"password for {site}: {s}", [s]
    if kind == "db-url":
        s = password(rng).replace("#", "x").replace("%", "y")
        scheme = rng.choice(["postgres", "mysql", "mongodb"])
        return f"prod db is {scheme}://admin:{s}@db{rng.randint(1, 9)}.example.net:5432/app", [s]
    raise ValueError(kind)


KINDS = (
    "openai", "anthropic", "aws-pair", "github-classic", "github-fine", "slack", "stripe", "google",
    "jwt", "openssh-key", "rsa-key", "card", "wifi-password", "account-password", "db-url",
)  # fmt: skip


def corpus(seed: int, per_kind: int) -> tuple[list[dict[str, str]], dict[str, list[list[str]]]]:
    """OpenAI-style messages (secret turns among ordinary ones) and {kind: [needles per secret turn]}."""
    rng = random.Random(seed)
    messages: list[dict[str, str]] = []
    needles: dict[str, list[list[str]]] = defaultdict(list)
    plan = [k for k in KINDS for _ in range(per_kind)]
    rng.shuffle(plan)
    for i, kind in enumerate(plan):
        messages.append({"role": "user", "content": FILLER[i % len(FILLER)]})
        messages.append({"role": "assistant", "content": "Sounds good, tell me more."})
        sentence, found = make(kind, rng)
        messages.append({"role": "user", "content": rng.choice(WRAPS).format(s=sentence)})
        messages.append({"role": "assistant", "content": "Got it."})
        needles[kind].append(found)
    return messages, needles


def landed(root: Path, needles: dict[str, list[list[str]]]) -> dict[str, int]:
    """{kind: secrets of that kind found anywhere under root or in its journal}."""
    flat = [n.encode() for per in needles.values() for turn in per for n in turn]
    found = traces(root, flat)
    out: dict[str, int] = {}
    for kind, per in needles.items():
        if kind in ("openssh-key", "rsa-key"):  # one secret per block: any body line found
            out[kind] = sum(1 for turn in per if any(n.encode() in found for n in turn))
        else:
            out[kind] = sum(1 for turn in per for n in turn if n.encode() in found)
    return out


def ingest_corpus(work: Path, messages: list[dict[str, str]]) -> dict[str, Path]:
    chat = work / "chat.json"
    chat.write_text(json.dumps(messages), encoding="utf-8")
    roots: dict[str, Path] = {}
    for how in ("dump", "curate"):
        root = roots[how] = work / how
        CliRunner().invoke(cli, ["init", str(root)])
        res = CliRunner().invoke(cli, ["ingest", str(root), str(chat), "-m", "offline", "--strategy", how])
        print(f"  ingest --strategy {how}: exit {res.exit_code}; " + _redacted_line(res.output))
        with Memory(root) as memory:
            memory.search("key password token", k=3)  # the search index built over the files
    root = roots["tools"] = work / "tools"
    with Memory(root) as memory:
        told = 0
        for i, m in enumerate(x for x in messages if x["role"] == "user"):
            note = f"---\nname: n{i}\ndescription: a note\n---\n# Note\n{m['content']}\n"
            told += (
                "Redacted" in memory.call("create", {"path": f"/memories/n{i}.md", "file_text": note}).text
            )
        memory.search("key password token", k=3)
        print(f"  create tool: {told} replies said what they redacted")
    return roots


def _redacted_line(output: str) -> str:
    return next((ln for ln in output.splitlines() if "redacted" in ln), "no redaction line")


def dialogue_turns(data: Path) -> list[tuple[str, str, Turn]]:
    out: list[tuple[str, str, Turn]] = []
    for sample in json.loads((data / "locomo" / "locomo10.json").read_text(encoding="utf-8")):
        turns, _ = locomo_turns(sample["conversation"])
        out += [("locomo", str(sample.get("sample_id")), t) for t in turns]
    for f in sorted((data / "realtalk").glob("*.json")):
        turns, _ = realtalk_turns(json.loads(f.read_text(encoding="utf-8")))
        out += [("realtalk", f.stem, t) for t in turns]
    return out


def false_positives(data: Path) -> None:
    turns = dialogue_turns(data)
    flagged = [(src, conv, t, scan(t.text)) for src, conv, t in turns]
    flagged = [f for f in flagged if f[3]]
    by_src = Counter(src for src, _, _ in turns)
    for src in sorted(by_src):
        n = sum(1 for f in flagged if f[0] == src)
        print(f"  {src}: {n} of {by_src[src]:,} turns flagged ({100 * n / by_src[src]:.3f}%)")
    print(f"  all: {len(flagged)} of {len(turns):,} turns flagged ({100 * len(flagged) / len(turns):.3f}%)")
    for src, conv, t, hits in flagged:
        print(f"    {src} {conv} {t.locator} {[h.kind for h in hits]}: {redact(t.text)[0][:160]!r}")
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    for plugin in (Base64HighEntropyString(), HexHighEntropyString()):
        n = sum(1 for _, _, t in turns if list(plugin.analyze_string(t.text)))
        print(f"  left out, measured: detect-secrets {type(plugin).__name__} would flag {n} turns")


def cost(data: Path) -> None:
    """Scan time of 10 KB of chat (LoCoMo turns as a dump session file holds them), of 10 KB of
    long tokens (paths), and of 10 KB that also holds every word a detector's gate looks for, so
    every detector runs (the worst case): the median of 30 runs each."""
    turns = [t for src, _, t in dialogue_turns(data) if src == "locomo"]
    prose = "".join(f"- {t.speaker}: {t.text} [{t.locator}]\n" for t in turns)[:10240]
    paths = "".join(f"- see /memories/people/friends_of_caroline_{i}/notes [S1T{i}]\n" for i in range(400))[
        :10240
    ]
    words = "the api key, the password, the token and the secret: see "
    worst = "".join(f"{words}/memories/people/friends_of_caroline_{i}/notes\n" for i in range(200))[:10240]
    for name, text in (("chat", prose), ("paths", paths), ("paths and every gate word", worst)):
        scan(text)
        runs = []
        for _ in range(30):
            t0 = time.perf_counter()
            scan(text)
            runs.append(time.perf_counter() - t0)
        print(
            f"  scan of 10 KB ({name}): median {1000 * statistics.median(runs):.2f} ms, "
            f"min {1000 * min(runs):.2f} ms"
        )


def cost_per_file() -> None:
    """CPU time of one scan per 1 KB memory file (2,000 synthetic notes: frontmatter, headings,
    fact lines), the cost `memdir check` pays per file: CPU time, so a loaded machine's waits
    do not count."""
    from _common import file_text

    rng = random.Random(1)
    texts = [file_text(f"f{i}", rng, 1000, i) for i in range(2000)]
    scan(texts[0])
    runs = []
    for _ in range(3):
        t0 = time.process_time()
        for text in texts:
            scan(text)
        runs.append((time.process_time() - t0) / len(texts))
    print(f"  scan of a 1 KB memory file: {1e6 * min(runs):.0f} us of CPU (best of 3 passes over 2,000)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--per-kind", type=int, default=4)
    args = ap.parse_args()
    data = os.environ.get("MEMDIR_DATA")
    messages, needles = corpus(args.seed, args.per_kind)
    total = sum(
        len(turn) if k not in ("openssh-key", "rsa-key") else 1 for k, per in needles.items() for turn in per
    )
    print(f"corpus: seed {args.seed}, {total} secrets of {len(needles)} kinds in {len(messages)} chat turns")
    with tempfile.TemporaryDirectory() as tmp:
        roots = ingest_corpus(Path(tmp), messages)
        print("landed (byte search of every file under the root and every journal object):")
        print(f"  {'kind':18} {'secrets':>7} " + " ".join(f"{h:>7}" for h in roots))
        sums = Counter()
        per_root = {h: landed(r, needles) for h, r in roots.items()}
        for kind, per in needles.items():
            n = len(per) if kind in ("openssh-key", "rsa-key") else sum(len(t) for t in per)
            row = " ".join(f"{per_root[h][kind]:>7}" for h in roots)
            sums.update({h: per_root[h][kind] for h in roots})
            print(f"  {kind:18} {n:>7} {row}")
        print(f"  {'total':18} {total:>7} " + " ".join(f"{sums[h]:>7}" for h in roots))
    if not data:
        print("MEMDIR_DATA is not set: the false-positive pass and the cost on chat need LoCoMo and REALTALK")
        sys.exit(0)
    print("false positives, every turn of LoCoMo and REALTALK:")
    false_positives(Path(data))
    print("cost:")
    cost(Path(data))
    cost_per_file()


if __name__ == "__main__":
    main()
