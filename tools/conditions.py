"""RFC 9110's conditional requests and byte ranges, decided for an answer `./course serve` sends
from memory (tools/serve.py); aiohttp's FileResponse decides them for a file sent from disk."""

from __future__ import annotations

import re

from aiohttp import hdrs, web


def decide(request: web.BaseRequest, etag: str, modified: int, size: int) -> tuple[int, int, int]:
    """(status, first byte, last byte) of a GET or HEAD of a file of `size` bytes whose entity tag
    is `etag` (without quotes) and Last-Modified `modified` (whole seconds since 1970), in RFC
    9110's order (13.2.2): If-Match, else If-Unmodified-Since (412); If-None-Match, weak
    comparison, else If-Modified-Since (304); then a GET's one byte range (206, or 416 when it
    lies past the end), if If-Range holds. A malformed Range, or several ranges, is ignored (the
    whole file)."""
    headers = request.headers
    if hdrs.IF_MATCH in headers:
        if not any(tag.value == "*" or (not tag.is_weak and tag.value == etag) for tag in request.if_match or ()):
            return 412, 0, -1
    elif (since := request.if_unmodified_since) is not None and modified > since.timestamp():
        return 412, 0, -1
    if (tags := request.if_none_match) is not None:
        if any(tag.value in ("*", etag) for tag in tags):
            return 304, 0, -1
    elif (since := request.if_modified_since) is not None and modified <= since.timestamp():
        return 304, 0, -1
    whole = 200, 0, size - 1
    if request.method != "GET" or hdrs.RANGE not in headers:
        return whole
    if hdrs.IF_RANGE in headers and not _if_range_holds(request, etag, modified):
        return whole
    return _byte_range(headers[hdrs.RANGE], size) or whole


def _if_range_holds(request: web.BaseRequest, etag: str, modified: int) -> bool:
    """If-Range: a strong entity tag equal to `etag`, or exactly the Last-Modified date."""
    value = request.headers[hdrs.IF_RANGE].strip()
    if value.startswith(('"', "W/")):
        return value == f'"{etag}"'
    date = request.if_range
    return date is not None and date.timestamp() == modified


_RANGE = re.compile(r"bytes=([0-9]{0,18})-([0-9]{0,18})", re.ASCII | re.IGNORECASE)


def _byte_range(value: str, size: int) -> tuple[int, int, int] | None:
    """(206, first, last) of one byte range of a file of `size` bytes, (416, 0, -1) when it starts
    past the end (or asks for a last 0 bytes), None when it is not one valid range."""
    found = _RANGE.fullmatch(value.strip())
    if found is None or not (found[1] or found[2]):
        return None
    if not found[1]:                                     # the last N bytes
        wanted = int(found[2])
        return (206, max(0, size - wanted), size - 1) if wanted and size else (416, 0, -1)
    first, last = int(found[1]), int(found[2]) if found[2] else None
    if last is not None and last < first:
        return None
    if first >= size:
        return 416, 0, -1
    return 206, first, size - 1 if last is None else min(last, size - 1)
