"""The days a turn's words can stand for, against the day it was said: the *time* rule of a
written fact (docs/metrics.md, "Truth of a line").

A fact line carries a day (`- 2023-05-08: Caroline | event: ...`, `(since 2023-05-08)`). It is
true only when the turn it cites was said that day, or the turn names that day in its own words
("yesterday", "last week", "on Friday", "in March", "May 5"). A curator that writes any other day
has invented one: the 1.5B model wrote `1999-12-31` for a turn of 2024-03-01 that named no day.

Each expression resolves to a window of days, not one day: "last week" is 3 to 13 days back,
"in March" the whole month (this year's, or last year's when March is still to come), so a
curator that resolves an expression to any day inside it is right. The windows are stated here
and in docs/metrics.md; a reader of the diary would accept each.
"""

from __future__ import annotations

import re
from datetime import date as Date
from datetime import timedelta

Window = tuple[Date, Date]

MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "few": 3,
    "couple": 2,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
# (pattern, days back from the session day: earliest, latest); negative is ahead.
_FIXED: tuple[tuple[str, int, int], ...] = (
    (r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b|\bjust now\b", 0, 0),
    (r"\byesterday\b|\blast night\b", 1, 1),
    (r"\bthe other day\b|\brecently\b|\blately\b", 0, 14),
    (r"\bthis week\b", 0, 7),
    (r"\blast week(?:end)?\b", 3, 13),
    (r"\bthis month\b", 0, 31),
    (r"\blast month\b", 20, 62),
    (r"\bthis year\b", 0, 366),
    (r"\blast year\b", 180, 730),
    (r"\btomorrow\b", -1, -1),
    (r"\bnext week(?:end)?\b", -13, -3),
    (r"\bnext month\b", -62, -20),
    (r"\bnext year\b", -730, -180),
    (r"\bsoon\b|\bthis weekend\b", -14, 0),
)
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|few|couple)(?: of)? (day|week|month|year)s? ago\b"
)
_IN_UNITS = re.compile(
    r"\bin (\d+|a|an|one|two|three|four|five|six|few|couple)(?: of)? (day|week|month|year)s\b"
)
_WEEKDAY = re.compile(r"\b(?:(last|next|this|on) )?(" + "|".join(WEEKDAYS) + r")\b")
_MONTH_DAY = re.compile(
    r"\b("
    + "|".join(MONTHS)
    + r")\.? (\d{1,2})(?:st|nd|rd|th)?\b|\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?("
    + "|".join(MONTHS)
    + r")\b"
)
_MONTH = re.compile(r"\b(?:in|since|during|last|this|next|early|late|mid|of) (" + "|".join(MONTHS) + r")\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(?:in|since|back in) ((?:19|20)\d{2})\b")


def windows(text: str, said: Date) -> list[Window]:
    """Every window of days `text` names, resolved against `said`, the day it was said."""
    low = text.lower()
    out: list[Window] = []
    for pattern, earliest, latest in _FIXED:
        if re.search(pattern, low):
            out.append((said - timedelta(days=earliest), said - timedelta(days=latest)))
    for m in _AGO.finditer(low):
        n = int(m[1]) if m[1].isdigit() else _NUMBER[m[1]]
        back = n * _UNIT_DAYS[m[2]]
        out.append((said - timedelta(days=back + back // 2 + 1), said - timedelta(days=max(0, back // 2))))
    for m in _IN_UNITS.finditer(low):
        n = int(m[1]) if m[1].isdigit() else _NUMBER[m[1]]
        ahead = n * _UNIT_DAYS[m[2]]
        out.append((said + timedelta(days=max(0, ahead // 2)), said + timedelta(days=ahead + ahead // 2 + 1)))
    for m in _WEEKDAY.finditer(low):
        out.append(_weekday(m[1], WEEKDAYS.index(m[2]), said))
    for m in _MONTH_DAY.finditer(low):
        month, day = (MONTHS[m[1]], int(m[2])) if m[1] else (MONTHS[m[4]], int(m[3]))
        out.extend((d, d) for d in _days_in_years(month, day, said))
    for m in _MONTH.finditer(low):
        out.extend(_month(MONTHS[m[1]], said, m.group(0).split()[0]))
    for m in _ISO.finditer(text):
        out.extend((d, d) for d in _days_in_years(int(m[2]), int(m[3]), said, year=int(m[1])))
    for m in _YEAR.finditer(low):
        out.append((Date(int(m[1]), 1, 1), Date(int(m[1]), 12, 31)))
    return out


def _weekday(which: str | None, weekday: int, said: Date) -> Window:
    """ "on Friday" in the past week or the coming one (a plan); "last Friday" up to two weeks back."""
    if which == "next":
        return said + timedelta(days=1), said + timedelta(days=14)
    if which == "last":
        return said - timedelta(days=14), said - timedelta(days=1)
    return said - timedelta(days=7), said + timedelta(days=7)


def _days_in_years(month: int, day: int, said: Date, year: int | None = None) -> list[Date]:
    found = []
    for y in [year] if year else [said.year - 1, said.year, said.year + 1]:
        try:
            found.append(Date(y, month, day))
        except ValueError:
            continue
    return found


def _month(month: int, said: Date, lead: str) -> list[Window]:
    """The named month: the last one to have begun ("last March", or "in March" said in May), the
    next one to come ("next March"), or for a plain "in March" either (a plan says it too)."""
    past = said.year if month <= said.month else said.year - 1
    coming = said.year if month >= said.month else said.year + 1
    years = {"last": [past], "next": [coming]}.get(lead, sorted({past, coming}))
    return [_whole_month(y, month) for y in years]


def _whole_month(year: int, month: int) -> Window:
    first = Date(year, month, 1)
    return first, Date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)


def day_fits(day: str, text: str, said: str | None) -> bool:
    """Whether a line's `day` (ISO) is the day `text` was `said` (ISO), or a day `text` names
    resolved against it. A line with no day, or a turn with no known day, is not judged here."""
    if not day or not said:
        return True
    try:
        d, s = Date.fromisoformat(day), Date.fromisoformat(said)
    except ValueError:
        return False
    return d == s or any(a <= d <= b or b <= d <= a for a, b in windows(text, s))
