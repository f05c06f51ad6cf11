"""Lexical scores (no model), what `--judge offline` grades by: LoCoMo's token F1, and exact
match over multiple-choice options.

The F1 reproduces LoCoMo's `task_eval/evaluation.py` rule for rule, because reference numbers
are only comparable under the same scorer:

- normalization: drop commas, lowercase, drop ASCII punctuation, drop the words a / an / the /
  and, collapse whitespace; tokens are Porter-stemmed (nltk) before counting;
- category 1 (multi-hop): prediction and gold are split on commas; the score is the mean over
  gold parts of the best F1 against any prediction part;
- category 3 (open-domain): the gold is cut at its first `;` before scoring;
- categories 2, 3, 4: plain token F1; category 5 (adversarial): 1 when the prediction says
  "no information available" or "not mentioned", else 0.

Multiple choice follows PersonaMem's own `extract_answer`: the text after `<final_answer>` if
present, option letters found in parentheses (else as bare words), correct only when exactly
the gold letter is found, with the whole response as a fallback.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache
from typing import Any

from memdir_study.bench.types import Question

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """nltk is imported on first use: importing it costs about a second and a half."""
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    return str(_stemmer().stem(word))


def normalize_answer(text: object) -> str:
    s = str(text).replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def tokens(text: object) -> list[str]:
    return [porter_stem(w) for w in normalize_answer(text).split()]


def f1_score(prediction: object, gold: object) -> float:
    pred, ref = tokens(prediction), tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: str, gold: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's score for one item, by its numeric category (also used for REALTALK)."""
    if category == 1:
        return f1_multi(prediction, gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category in (2, 3, 4):
        return f1_score(prediction, gold)
    if category == 5:
        low = prediction.lower()
        return 1.0 if "no information available" in low or "not mentioned" in low else 0.0
    raise ValueError(f"LoCoMo has no category {category}")


def choice_letters(text: str) -> set[str]:
    low = text.lower()
    in_parens = re.findall(r"\(([a-d])\)", low)
    return set(in_parens) if in_parens else set(re.findall(r"\b([a-d])\b", low))


def exact_match(response: str, gold: str) -> float:
    """1.0 when the response picks exactly the gold option letter (`(c)`, `c`, ...)."""
    correct = gold.lower().strip("() ")
    answer = response.strip()
    if "<final_answer>" in answer:
        answer = answer.split("<final_answer>")[-1].strip()
    answer = answer.removesuffix("</final_answer>").strip()
    if choice_letters(answer) == {correct} or choice_letters(response) == {correct}:
        return 1.0
    return 0.0


def offline_correctness(question: Question, answer: str) -> float:
    """The offline score of record for one item: exact match for multiple choice, LoCoMo's F1
    by category where the source has LoCoMo categories, plain token F1 otherwise."""
    if question.options:
        return exact_match(answer, question.gold)
    if question.category_code is not None:
        return locomo_f1(answer, question.gold, question.category_code)
    return f1_score(answer, question.gold)
