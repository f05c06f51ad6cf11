"""The JSON schemas of the tools' structured results (`ToolResult.data`, MCP `structuredContent`).

A tool's text is what a model reads; its data is the same outcome for programs: the sha256 a
writer passes back as `expected_sha256`, and the hits of grep, toc and the searches as fields
instead of lines to parse. Each schema is closed (`additionalProperties: false`), so a test that
validates every result against its schema also catches a field the schema forgot.
"""

from __future__ import annotations

from memdir.jsontypes import JsonObject

INT: JsonObject = {"type": "integer"}
STR: JsonObject = {"type": "string"}
NUM: JsonObject = {"type": "number"}
BOOL: JsonObject = {"type": "boolean"}
SHA256: JsonObject = {"type": "string", "pattern": "^[0-9a-f]{64}$"}


def obj(**props: JsonObject) -> JsonObject:
    """A closed object schema with every property required (absent values are null, not missing)."""
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def array(items: JsonObject) -> JsonObject:
    return {"type": "array", "items": items}


def nullable(schema: JsonObject) -> JsonObject:
    return {"anyOf": [schema, {"type": "null"}]}


def one_of(*schemas: JsonObject) -> JsonObject:
    """An object that is exactly one of `schemas` (MCP wants `type: object` at the root)."""
    return {"type": "object", "oneOf": list(schemas)}


KIND_FILE: JsonObject = {"const": "file"}
KIND_DIR: JsonObject = {"const": "directory"}

# A file as it is on disk after the call: what a writer needs for its next expected_sha256.
FILE_STATE = obj(path=STR, sha256=SHA256, lines=INT, bytes=INT)

VIEW = one_of(
    # start_line..end_line: the lines shown (0..0 for an empty file)
    obj(kind=KIND_FILE, path=STR, sha256=SHA256, lines=INT, bytes=INT, start_line=INT, end_line=INT),
    obj(
        kind=KIND_DIR,
        path=STR,
        size=INT,
        entries=array(
            obj(path=STR, kind={"enum": ["file", "directory"]}, size=INT, description=nullable(STR))
        ),
        entries_not_shown=INT,  # past the listing's cap, or named in no way a path can spell
        not_read=INT,  # entries the walk left unread (too deep, a name that is not UTF-8)
    ),
)

DELETE = obj(path=STR, kind={"enum": ["file", "directory"]}, deleted=array(STR))

RENAME = one_of(
    obj(kind=KIND_FILE, old_path=STR, new_path=STR, sha256=SHA256),
    obj(kind=KIND_DIR, old_path=STR, new_path=STR),
)

# A line a search shows; `past`: a struck-through past value of a keyed fact (docs/retrieval.md)
SHOWN_LINE = obj(line=INT, text=STR, past=BOOL)

GREP = obj(
    pattern=STR,
    path=STR,
    matches=array(obj(path=STR, line=INT, text=STR)),  # text as shown: clipped past 400 characters
    truncated=BOOL,  # the listing stopped at max_results or at the reply-size bound
)

TOC = obj(
    path=STR,
    lines=INT,
    sections=array(obj(heading=STR, heading_path=STR, level=INT, depth=INT, start_line=INT, end_line=INT)),
)

SECTION = obj(path=STR, heading_path=STR, start_line=INT, end_line=INT, same_path_at=array(INT))

BM25_FULL = obj(
    query=STR,
    path=STR,
    results=array(
        obj(
            rank=INT,
            path=STR,
            score=NUM,
            description=nullable(STR),
            lines=array(SHOWN_LINE),
            matched=array(STR),
            superseded=BOOL,  # it shows past values only, no live one
        )
    ),
)

SECTION_SEARCH = obj(
    query=STR,
    path=STR,
    mode=STR,
    results=array(
        obj(
            rank=INT,
            path=STR,
            heading_path=nullable(STR),
            start_line=INT,
            end_line=INT,
            score=NUM,
            ranks={"type": "object", "additionalProperties": INT},  # {"bm25": 2, "dense": 5}
            lines=array(SHOWN_LINE),
            navigation=BOOL,  # a folder index's section, ranked after every content hit
            superseded=BOOL,  # it shows past values only, no live one
        )
    ),
)

# health (docs/health.md): each finding's detail has the shape its kind gives it.
_REF = {"path": STR, "heading_path": STR, "line": nullable(INT), "ref": STR}  # `ref`: line-free name
_FACT = obj(path=STR, line=INT, value=STR, since=STR, until=nullable(STR), text=STR)
HEALTH_DETAILS: dict[str, JsonObject] = {
    "stale-live": obj(
        subject=STR,
        attribute=STR,
        reason={"enum": ["superseded-elsewhere", "older", "same-date", "same-value"]},
        stale=_FACT,
        current=_FACT,
        superseded=array(_FACT),
        replacement=nullable(STR),  # the struck-through line that retires the stale one
    ),
    "supersede-dates": obj(subject=STR, attribute=STR, live=_FACT, superseded=array(_FACT)),
    "dangling-ref": obj(line=INT, text=STR, target=STR, section=nullable(STR), candidates=array(STR)),
    "core-budget": obj(tokens=INT, budget=INT, files=array(obj(path=STR, tokens=INT))),
    "fanout": obj(entries=INT, cap=INT, children=array(STR)),
    "near-duplicate": obj(a=obj(**_REF), b=obj(**_REF), cosine=NUM),
    "leaked": obj(
        unit=obj(**_REF), own_group=obj(**_REF), nearer_group=obj(**_REF), cos_own=NUM, cos_nearer=NUM
    ),
    "confusable": obj(a=obj(**_REF, label=STR), b=obj(**_REF, label=STR), parent=STR, distance=NUM),
    "over-long": obj(**_REF, chars=INT, limit=INT),
}
HEALTH = obj(
    path=STR,
    total=INT,  # findings within path
    not_shown=INT,  # of those, past the cap of `findings`
    counts=obj(**{kind: INT for kind in HEALTH_DETAILS}),
    findings=array(
        one_of(
            *(
                obj(
                    kind={"const": kind},
                    path=STR,
                    related=array(STR),
                    message=STR,
                    action=STR,
                    key=STR,
                    detail=detail,
                )
                for kind, detail in HEALTH_DETAILS.items()
            )
        )
    ),
)
