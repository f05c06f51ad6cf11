"""Chat exports as the services hand them over: a .zip holding `conversations.json` (ChatGPT's
beside chat.html, user.json and the chat's images; Claude.ai's beside users.json and
projects.json). `read.py` reads that one member as it reads the file itself, so what the JSON is
(`exports.export_kind`: ChatGPT's `mapping` or Claude.ai's `chat_messages`) is told the same way.

Nothing is extracted: the member is read into memory and no name in the zip is ever a path on
disk, so no name can climb out of anywhere. A member is taken only as `conversations.json` at
the top or one folder down (a zip made again of the unpacked folder), never under a name that
climbs (`..`) or is absolute, and two candidates are the user's choice, not ours.

Two caps bound what a zip can cost, each refused with what to do (docs/ingest.md):
- MAX_ZIP_MEMBERS members: Python's zipfile reads the whole listing into memory to find one
  name, so the count is read from the zip's end record before the listing is;
- the member's unpacked size, the one bound of a JSON file parsed whole (stream.MAX_JSON_LIST_BYTES):
  refused on the size the listing states, and the read stops one byte past the cap whatever it
  states (zipfile stops at the stated size and checks the CRC, so a lie is a damaged zip). No
  other member (images, attachments) is unpacked.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import BinaryIO

from memdir.stream import MAX_JSON_LIST_BYTES

EXPORT_MEMBER = "conversations.json"
# ChatGPT's export holds a file per image and attachment besides the chat: a few thousand for a
# heavy user. The listing costs some hundreds of bytes of memory a member, so 100,000 members
# bound it near 50 MB.
MAX_ZIP_MEMBERS = 100_000
_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; the end record of an empty zip
_END = b"PK\x05\x06"
_END64_LOCATOR = b"PK\x06\x07"
_END64 = b"PK\x06\x06"
_SHOWN_NAMES = 10


def is_zip(fh: BinaryIO) -> bool:
    """Whether `fh` opens as a zip does; leaves `fh` at the start."""
    head = fh.read(4)
    fh.seek(0)
    return head in _MAGIC


def export_member(fh: BinaryIO, path: str) -> tuple[str, BinaryIO]:
    """(`path (member)` for errors, the member's bytes) of the export zip `fh`."""
    count = _member_count(fh)
    if count is not None and count > MAX_ZIP_MEMBERS:
        raise ValueError(
            f"{path}: a zip of {count:,} members; memdir reads an export zip of at most "
            f"{MAX_ZIP_MEMBERS:,} (it lists them all to find {EXPORT_MEMBER}); unzip it and ingest "
            f"the {EXPORT_MEMBER} inside"
        )
    try:
        with zipfile.ZipFile(fh) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:  # an end record that undercounts
                raise ValueError(
                    f"{path}: a zip of {len(infos):,} members; memdir reads an export zip of at most "
                    f"{MAX_ZIP_MEMBERS:,}; unzip it and ingest the {EXPORT_MEMBER} inside"
                )
            info = _the_member(infos, path)
            shown = f"{path} ({info.filename})"
            _check_size(info.file_size, shown)
            with zf.open(info) as member:
                data = member.read(MAX_JSON_LIST_BYTES + 1)
            _check_size(len(data), shown)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise ValueError(
            f"{path}: not a readable zip ({exc}); download the export again, or unzip it and ingest "
            f"its {EXPORT_MEMBER}"
        ) from None
    except RuntimeError as exc:  # zipfile's word for a member that needs a password
        raise ValueError(
            f"{path}: its {EXPORT_MEMBER} is encrypted ({exc}); unzip it with its password and ingest "
            f"the {EXPORT_MEMBER}"
        ) from None
    return shown, io.BytesIO(data)


def _the_member(infos: list[zipfile.ZipInfo], path: str) -> zipfile.ZipInfo:
    found = [i for i in infos if not i.is_dir() and _is_export_name(i.filename)]
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(i.filename for i in found)
        raise ValueError(
            f"{path}: a zip with {len(found)} {EXPORT_MEMBER} ({names}); unzip it and ingest the one you mean"
        )
    listed = ", ".join(i.filename for i in infos[:_SHOWN_NAMES])
    more = f" and {len(infos) - _SHOWN_NAMES:,} more" if len(infos) > _SHOWN_NAMES else ""
    holds = f"it holds {listed}{more}" if infos else "it is empty"
    raise ValueError(
        f"{path}: a zip with no {EXPORT_MEMBER} ({holds}); a ChatGPT or Claude.ai export zip holds "
        f"{EXPORT_MEMBER} at its top: ingest the zip as the service sent it, or the chat file itself"
    )


def _is_export_name(name: str) -> bool:
    """`conversations.json`, or one folder down; never a name that climbs or is absolute."""
    parts = name.split("/")
    if parts[-1] != EXPORT_MEMBER or len(parts) > 2 or "\\" in name:
        return False
    return len(parts) == 1 or parts[0] not in ("", ".", "..")


def _check_size(size: int, shown: str) -> None:
    if size > MAX_JSON_LIST_BYTES:
        cap = MAX_JSON_LIST_BYTES // 2**20
        raise ValueError(
            f"{shown}: unpacks to more than {cap} MiB, the most memdir reads of one JSON file (it is "
            f"parsed whole); split its conversations into JSON lists of at most {cap} MiB each and "
            "ingest them one by one"
        )


def _member_count(fh: BinaryIO) -> int | None:
    """The member count the zip's end record states (zip64's when it defers to it), read from
    its last 64 KiB; None when there is no end record (zipfile then says what is wrong)."""
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    tail_at = max(0, size - (22 + 65_535))  # the end record and the longest comment
    fh.seek(tail_at)
    tail = fh.read()
    fh.seek(0)
    at = tail.rfind(_END)
    if at < 0 or len(tail) < at + 22:
        return None
    count = int.from_bytes(tail[at + 10 : at + 12], "little")
    locator = at - 20
    if locator >= 0 and tail[locator : locator + 4] == _END64_LOCATOR:
        fh.seek(int.from_bytes(tail[locator + 8 : locator + 16], "little"))
        record = fh.read(40)
        fh.seek(0)
        if record[:4] == _END64 and len(record) == 40:
            count = max(count, int.from_bytes(record[32:40], "little"))
    return count
