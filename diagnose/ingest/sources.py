"""Where log bytes come from: files, gzip files, directories and stdin, as blocks of whole lines.

- A directory is searched recursively for ``*.log``, ``*.txt``, ``*.json``, ``*.jsonl``
  and ``*.gz``, in sorted path order; a directory with none of them is an error.
- gzip is recognised by its magic bytes (``1f 8b``) whatever the name; concatenated
  members are read in turn.
- Text encoding: UTF-8 (a UTF-8 byte-order mark is dropped). A UTF-16 byte-order mark
  (``FF FE`` or ``FE FF``) switches the input to UTF-16. Anything else that is not valid
  UTF-8 (latin-1, binary garbage) is decoded with U+FFFD replacement characters, so such
  lines are still counted and shown.
- Blocks end on a line boundary (except at the end of the input) and are about
  ``BLOCK_BYTES`` long, which bounds memory whatever the input size.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from provisioner.model.errors import InputError

__all__ = ["BLOCK_BYTES", "LOG_SUFFIXES", "IngestError", "Source", "discover", "line_blocks", "whole_line_blocks"]

BLOCK_BYTES = 8 << 20
READ_BYTES = 8 << 20
_PEEK = 64 << 10  # how far back from a block's end a plain file is searched for the last newline
LOG_SUFFIXES = (".log", ".txt", ".json", ".jsonl", ".gz")


class IngestError(InputError):
    """An input that cannot be read; the message names it."""


@dataclass(frozen=True, slots=True)
class Source:
    name: str  # shown in evidence (file:line); "-" for stdin
    path: Path | None  # None for stdin
    size: int  # bytes on disk (0 for stdin)


def discover(paths: Sequence[str]) -> list[Source]:
    """Expand the inputs into readable sources, in order; raises IngestError naming a bad one."""
    sources: list[Source] = []
    for given in paths:
        if given == "-":
            sources.append(Source("-", None, 0))
            continue
        path = Path(given)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(LOG_SUFFIXES)
            )
            if not found:
                raise IngestError(f"{given}: directory has no log files (*.log, *.txt, *.json, *.jsonl, *.gz)")
            sources.extend(Source(str(p), p, p.stat().st_size) for p in found)
        elif path.is_file():
            try:
                with path.open("rb"):
                    pass
            except OSError as e:
                raise IngestError(f"{given}: cannot read: {e.strerror or e}") from e
            sources.append(Source(given, path, path.stat().st_size))
        elif path.exists():  # a named pipe or a device: opened once, when it is read
            if not os.access(path, os.R_OK):
                raise IngestError(f"{given}: cannot read: Permission denied")
            sources.append(Source(given, path, 0))
        else:
            raise IngestError(f"{given}: no such file or directory")
    return sources


def _raw_reads(stream: BinaryIO, name: str, counted: Callable[[int], None]) -> Iterator[bytes]:
    while True:
        try:
            data = stream.read(min(READ_BYTES, BLOCK_BYTES))
        except OSError as e:
            raise IngestError(f"{name}: cannot read: {e.strerror or e}") from e
        if not data:
            return
        counted(len(data))
        yield data


def _gunzip(reads: Iterator[bytes], name: str) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(wbits=31)
    for data in reads:
        while data:
            try:
                out = decompressor.decompress(data)
            except zlib.error as e:
                raise IngestError(f"{name}: not a valid gzip file: {e}") from e
            if out:
                yield out
            if decompressor.eof:
                data = decompressor.unused_data
                decompressor = zlib.decompressobj(wbits=31)
            else:
                data = b""
    tail = decompressor.flush()
    if tail:
        yield tail


def _decoded(reads: Iterator[bytes]) -> Iterator[bytes]:
    """UTF-8 bytes out; a UTF-16 BOM switches to UTF-16, a UTF-8 BOM is dropped."""
    first = next(reads, b"")
    while len(first) < 4:
        more = next(reads, None)
        if more is None:
            break
        first += more
    if first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        yield decoder.decode(first).encode("utf-8")
        for data in reads:
            yield decoder.decode(data).encode("utf-8")
        yield decoder.decode(b"", final=True).encode("utf-8")
        return
    yield first.removeprefix(codecs.BOM_UTF8)
    yield from reads


def _pieces(stream: BinaryIO, name: str, counted: Callable[[int], None]) -> Iterator[bytes]:
    """A stream's content as UTF-8-ish bytes (unvalidated, gzip undone), in arbitrary pieces."""
    return _maybe_gzip(_raw_reads(stream, name, counted), name)


def _maybe_gzip(reads: Iterator[bytes], name: str) -> Iterator[bytes]:
    first = next(reads, b"")
    rest = _chain(first, reads)
    if first[:2] == b"\x1f\x8b":
        yield from _decoded(_gunzip(rest, name))
    else:
        yield from _decoded(rest)


def _chain(first: bytes, reads: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from reads


def line_blocks(pieces: Iterator[bytes], size: int = BLOCK_BYTES) -> Iterator[bytes]:
    """Regroup pieces into blocks of about ``size`` bytes that end at a newline (each block's
    bytes copied once)."""
    pending: list[bytes | memoryview] = []
    pending_len = 0
    for piece in pieces:
        if pending_len + len(piece) < size:
            pending.append(piece)
            pending_len += len(piece)
            continue
        cut = piece.rfind(b"\n")
        if cut < 0:  # no line ends in this piece: keep accumulating
            pending.append(piece)
            pending_len += len(piece)
            continue
        pending.append(memoryview(piece)[: cut + 1])
        yield b"".join(pending)
        rest = piece[cut + 1 :]
        pending, pending_len = ([rest], len(rest)) if rest else ([], 0)
    if pending_len:
        yield b"".join(pending)


def whole_line_blocks(source: Source, stdin: BinaryIO | None, counted: Callable[[int], None]) -> Iterator[bytes]:
    """The source in blocks of whole lines of about ``BLOCK_BYTES`` (as ``line_blocks``).

    A plain file (regular, neither gzip nor UTF-16) is read one block per read, each read
    ending just after a newline found by looking at the end of the span first: no block
    is copied together from pieces, and the copy from the file happens outside the
    interpreter lock. Anything else (stdin, pipes, gzip, UTF-16) is read in pieces and
    regrouped by ``line_blocks``."""
    size = BLOCK_BYTES
    if source.path is None:
        yield from line_blocks(_pieces(stdin if stdin is not None else sys.stdin.buffer, "stdin", counted), size)
        return
    try:
        stream = source.path.open("rb", buffering=0)
    except OSError as e:
        raise IngestError(f"{source.name}: cannot read: {e.strerror or e}") from e
    with stream:
        fd = stream.fileno()
        try:
            plain = stat.S_ISREG(os.fstat(fd).st_mode)
            head = os.pread(fd, 4, 0) if plain else b""  # (pread leaves the stream where it is)
        except OSError as e:
            raise IngestError(f"{source.name}: cannot read: {e.strerror or e}") from e
        if plain and not head.startswith((b"\x1f\x8b", codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            start = len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0
            counted(start)
            yield from _aligned(fd, source.name, counted, start, size)
        else:
            yield from line_blocks(_pieces(stream, source.name, counted), size)


def _aligned(fd: int, name: str, counted: Callable[[int], None], offset: int, size: int) -> Iterator[bytes]:
    while True:
        try:
            end = _line_end(fd, offset, offset + size)
            want = end - offset if end is not None else os.fstat(fd).st_size - offset
            data = os.pread(fd, want, offset) if want > 0 else b""
        except OSError as e:
            raise IngestError(f"{name}: cannot read: {e.strerror or e}") from e
        if not data:
            return
        counted(len(data))
        offset += len(data)
        yield data


def _line_end(fd: int, start: int, at: int) -> int | None:
    """The offset just after the last newline in ``[start, at)`` (looking back at most
    ``_PEEK`` bytes), else just after the first newline from ``at`` on (a long line); None
    when the file ends first."""
    low = max(start, at - _PEEK)
    window = os.pread(fd, at - low, low)
    if len(window) < at - low:
        return None
    cut = window.rfind(b"\n")
    if cut >= 0:
        return low + cut + 1
    position = at
    while True:
        chunk = os.pread(fd, _PEEK, position)
        if not chunk:
            return None
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(chunk)
