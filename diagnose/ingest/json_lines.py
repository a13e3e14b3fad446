"""The vectorised path: a block of JSON lines to table rows, in polars, without a Python loop per line.

A block is a run of whole lines (tens of MB). Its lines are split by polars; a line is a
*candidate* when it is a JSON object on its own (``{`` … ``}``), possibly behind
``kubectl logs --prefix`` (``[pod/x/c] ``) and/or ``--timestamps`` (an RFC 3339 time and
a space). Candidates are decoded in one ``read_ndjson`` call against the superset
schema: the block's bytes are reused in place, every other line (and every prefix) is
overwritten with spaces, which ndjson skips, so row *k* is the *k*-th candidate and line
numbers stay exact. ``read_ndjson`` refuses a whole block for one invalid line, so when it
does, candidates are checked one by one with orjson and the invalid ones are set aside.

Lines that are not candidates go back to the caller as *rare* lines (console encoding,
pretty-printed JSON, almost-JSON, text) for ``rare_lines``; blank lines are counted.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson
import polars as pl

from diagnose.ingest.columns import derive
from diagnose.ingest.vocabulary import DECODE_SCHEMA

__all__ = ["PREFIX_RE", "Block", "decode_block", "decode_records"]


# kubectl logs --prefix, then --timestamps, then the object (leading blanks tolerated)
PREFIX_RE = r"^(\[[^\]]*\] )?(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) )?\s*(\{.*\})$"


@dataclass(slots=True)
class Block:
    frame: pl.DataFrame
    first_line: int
    lines: int  # physical lines in the block
    parsed: int
    blank: int
    rare: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)


def _read_lines(data: bytes) -> tuple[pl.Series, bytes]:
    """The block's lines, and the bytes they were split from (CRLF made LF, invalid UTF-8 replaced),
    so that byte offsets computed from the lines hold in those bytes."""
    if b"\r" in data and b"\r\n" in data:  # (a single-byte search first: much faster)
        data = data.replace(b"\r\n", b"\n")
    data = _valid_utf8(data)
    return pl.read_lines(data).to_series(), data


def _valid_utf8(data: bytes) -> bytes:
    """The block with each line that is not valid UTF-8 decoded with U+FFFD replacements
    (the same bytes as replacing in the whole block), looking closely only at the pieces
    of the block that are not plain ASCII."""
    if data.isascii():
        return data
    pieces: list[bytes] = []
    changed = False
    start, size = 0, len(data)
    while start < size:
        end = data.find(b"\n", min(start + _PIECE, size))
        end = size if end < 0 else end + 1
        piece = data[start:end]
        if not piece.isascii():
            try:
                piece.decode("utf-8")
            except UnicodeDecodeError:
                piece = b"\n".join(line.decode("utf-8", errors="replace").encode("utf-8") for line in piece.split(b"\n"))
                changed = True
        pieces.append(piece)
        start = end
    return b"".join(pieces) if changed else data


_PIECE = 1 << 18


def _ndjson(data: bytes | bytearray) -> pl.DataFrame:
    return pl.read_ndjson(io.BytesIO(data), schema=DECODE_SCHEMA, ignore_errors=True)


def _valid(text: str) -> bool:
    try:
        return isinstance(orjson.loads(text), dict)
    except orjson.JSONDecodeError:
        return False


def decode_records(texts: list[str]) -> pl.DataFrame:
    """Decode JSON object texts (one per record, each valid) against the superset schema."""
    if not texts:
        return pl.DataFrame(schema=DECODE_SCHEMA)
    return _ndjson("\n".join(t.replace("\n", " ") for t in texts).encode("utf-8"))


def decode_block(
    data: bytes, first_line: int, file: str, lean: Callable[[pl.DataFrame], pl.DataFrame] | None = None
) -> Block:
    """Rows for the candidate lines of ``data`` (whole lines), the rest as rare lines; the
    rows cut by ``lean`` when given (``diagnose.ingest.lean``)."""
    lines, data = _read_lines(data)
    n = lines.len()
    if n == 0:
        return Block(pl.DataFrame(), first_line, 0, 0, 0)
    plain = lines.str.starts_with("{") & lines.str.ends_with("}")
    other_idx = (~plain).arg_true()
    others = lines.gather(other_idx)
    groups = others.str.extract_groups(PREFIX_RE)
    body = groups.struct.field("3")
    prefixed = body.is_not_null()
    candidate = plain.clone().scatter(other_idx, prefixed) if other_idx.len() else plain
    cand_idx = candidate.arg_true()
    prefix_time = (
        pl.repeat(None, n, dtype=pl.Utf8, eager=True).scatter(other_idx, groups.struct.field("2")).gather(cand_idx)
        if prefixed.any()
        else pl.repeat(None, cand_idx.len(), dtype=pl.Utf8, eager=True)
    )
    rest = others.filter(~prefixed)
    rest_idx = other_idx.filter(~prefixed)
    blank_mask = rest.str.strip_chars() == ""
    blank = int(blank_mask.sum())
    rare = list(zip((rest_idx.filter(~blank_mask) + first_line).to_list(), rest.filter(~blank_mask).to_list(), strict=True))

    cut = (others.str.len_bytes() - body.str.len_bytes().fill_null(0)).to_list()
    buf: bytes | bytearray = _blanked(data, lines, other_idx.to_list(), cut) if other_idx.len() else data
    # A block of a real log almost always holds a broken object somewhere (a cut line, an
    # unescaped quote), and read_ndjson then refuses the whole block: set the suspect
    # candidates that orjson rejects aside first, so one read_ndjson call usually does.
    texts = lines.clone().scatter(other_idx.filter(prefixed), body.filter(prefixed)) if prefixed.any() else lines
    decoded = None
    for suspects_only in (True, False):
        buf, bad = _without_invalid(buf, lines, texts, cand_idx, suspects_only)
        if bad.len():
            keep = ~cand_idx.is_in(bad.implode())
            cand_idx, prefix_time = cand_idx.filter(keep), prefix_time.filter(keep)
            rare = sorted(rare + [(i + first_line, lines[i]) for i in bad.to_list()])
        try:
            decoded = _ndjson(buf) if cand_idx.len() else pl.DataFrame(schema=DECODE_SCHEMA)
            if decoded.height == cand_idx.len():
                break
        except pl.exceptions.PolarsError:
            if not suspects_only:
                raise
        decoded = None
    assert decoded is not None
    meta = pl.DataFrame(
        {
            "line": (cand_idx.cast(pl.Int64) + first_line),
            "raw": lines.gather(cand_idx),
            "keep_raw": pl.repeat(False, cand_idx.len(), eager=True),
            "prefix_time": prefix_time,
            "status": pl.repeat("parsed", cand_idx.len(), eager=True),
            "shape": pl.repeat(None, cand_idx.len(), dtype=pl.Utf8, eager=True),
        }
    )
    rows = derive(decoded, meta, file, lean)
    return Block(rows, first_line, n, cand_idx.len(), blank, rare)


def _offsets(lines: pl.Series) -> tuple[list[int], list[int]]:
    """Byte offset and length of each line in the block (lines end with one LF)."""
    lengths = lines.str.len_bytes().cast(pl.Int64)
    starts = (lengths + 1).cum_sum() - (lengths + 1)
    return starts.to_list(), lengths.to_list()


def _blanked(data: bytes, lines: pl.Series, indices: list[int], cuts: list[int]) -> bytearray:
    """The block with the first ``cut`` bytes of each listed line overwritten by spaces."""
    starts, _ = _offsets(lines)
    buf = bytearray(data)
    for i, cut in zip(indices, cuts, strict=True):
        if cut:
            start = starts[i]
            buf[start : start + cut] = b" " * cut
    return buf


# Signs of a broken object, cheap to test on every candidate: unbalanced brackets (a cut
# line), or a quote that closes a string and is followed by more text (unescaped inner quotes).
_SUSPECT_QUOTE = r'[^\\]"\s+[^\s:,}\]]'


def _suspects(texts: pl.Series) -> pl.Series:
    unbalanced = (texts.str.count_matches("{", literal=True) != texts.str.count_matches("}", literal=True)) | (
        texts.str.count_matches("[", literal=True) != texts.str.count_matches("]", literal=True)
    )
    # the quote pattern only on the lines where a quote is followed by a blank (few in compact JSON);
    # a broken line missed here is still found by the full check that follows a refused block
    spaced = (texts.str.contains('" ', literal=True) | texts.str.contains('"\t', literal=True)).arg_true()
    if spaced.len() == 0:
        return unbalanced
    quoted = pl.repeat(False, texts.len(), eager=True).scatter(spaced, texts.gather(spaced).str.contains(_SUSPECT_QUOTE))
    return unbalanced | quoted


def _without_invalid(
    buf: bytes | bytearray, lines: pl.Series, texts: pl.Series, cand_idx: pl.Series, suspects_only: bool
) -> tuple[bytes | bytearray, pl.Series]:
    """Check candidates with orjson (only the suspect ones, or all) and blank the invalid ones.

    Returns the buffer and the indices of the lines set aside."""
    candidates = texts.gather(cand_idx)
    indices = cand_idx
    if suspects_only:
        mask = _suspects(candidates)
        candidates, indices = candidates.filter(mask), cand_idx.filter(mask)
    bad = [i for i, text in zip(indices.to_list(), candidates.to_list(), strict=True) if not _valid(text)]
    if not bad:
        return buf, pl.Series([], dtype=cand_idx.dtype)
    out = bytearray(buf)
    starts, lengths = _offsets(lines)
    for i in bad:
        out[starts[i] : starts[i] + lengths[i]] = b" " * lengths[i]
    return out, pl.Series(bad, dtype=cand_idx.dtype)
