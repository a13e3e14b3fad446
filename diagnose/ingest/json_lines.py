"""The vectorised path: a block of JSON lines to table rows, in polars, without a Python loop per line.

A block is a run of whole lines (tens of MB). Its lines are split by polars; a line is a
*candidate* when it is a JSON object on its own (``{`` … ``}``), possibly behind
``kubectl logs --prefix`` (``[pod/x/c] ``) and/or ``--timestamps`` (an RFC 3339 time and
a space). Candidates are decoded in one ``read_ndjson`` call against the superset
schema: the block's bytes are reused in place, every other line (and every prefix) is
overwritten with spaces, which ndjson skips, so row *k* is the *k*-th candidate and line
numbers stay exact. ``read_ndjson`` refuses a whole block for one invalid line, so when it
does, candidates are checked one by one with orjson and the invalid ones are set aside.

Lines that are not candidates are *rare* lines (console encoding, pretty-printed JSON,
almost-JSON, text), read by ``rare_lines`` in the same worker, their records derived there
too; only the runs of rare lines that touch the block's first or last line go back to the
caller, since a record there may continue in the next block.
Blank lines are counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import orjson
import polars as pl

from diagnose.ingest.columns import META_SCHEMA, constant, derive, materialized, unparsed_frame
from diagnose.ingest.rare_lines import Recovered, recover
from diagnose.ingest.vocabulary import DECODE_SCHEMA
from diagnose.schema import REPAIRED

__all__ = ["PREFIX_RE", "Block", "decode_block", "decode_records", "recovered_input"]


# kubectl logs --prefix, then --timestamps, then the object (leading blanks tolerated)
PREFIX_RE = r"^(\[[^\]]*\] )?(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) )?\s*(\{.*\})$"
# the same, up to the opening brace: a line matches PREFIX_RE when this matches and it ends with "}"
_HEAD_RE = r"^((\[[^\]]*\] )?(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) )?\s*)\{"


@dataclass(slots=True)
class Block:
    frame: pl.DataFrame
    first_line: int
    lines: int  # physical lines in the block
    parsed: int
    blank: int
    rare: list[tuple[int, str]] = field(default_factory=list)  # (line number, text): the edge runs, left to the caller
    # the rare lines read here (between the edge runs): lines they add to ``parsed``, the
    # repaired and unparsed line numbers, and the unparsed lines' rows (SCHEMA, or lean)
    recovered_parsed: int = 0
    repaired_lines: list[int] = field(default_factory=list)
    unparsed_lines: list[int] = field(default_factory=list)
    unparsed: pl.DataFrame | None = None

    def shifted(self, offset: int) -> Block:
        """The same block with every line number moved by ``offset``."""
        if offset == 0:
            return self
        return Block(
            _plus(self.frame, offset),
            self.first_line + offset,
            self.lines,
            self.parsed,
            self.blank,
            [(line + offset, text) for line, text in self.rare],
            self.recovered_parsed,
            [line + offset for line in self.repaired_lines],
            [line + offset for line in self.unparsed_lines],
            None if self.unparsed is None else _plus(self.unparsed, offset),
        )


def _plus(frame: pl.DataFrame, offset: int) -> pl.DataFrame:
    return frame.with_columns(pl.col("line") + offset) if "line" in frame.columns else frame


def _read_lines(data: bytes) -> tuple[pl.Series, bytes]:
    """The block's lines, and the bytes they were split from (CRLF made LF, invalid UTF-8 replaced),
    so that byte offsets computed from the lines hold in those bytes."""
    if b"\r" in data and b"\r\n" in data:  # (a single-byte search first: much faster)
        data = data.replace(b"\r\n", b"\n")
    try:  # polars checks UTF-8 far faster than Python, and most blocks are valid
        return pl.read_lines(data).to_series(), data
    except pl.exceptions.ComputeError:
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
            except UnicodeDecodeError:  # (a newline is never part of a sequence: as if line by line)
                piece = piece.decode("utf-8", errors="replace").encode("utf-8")
                changed = True
        pieces.append(piece)
        start = end
    return b"".join(pieces) if changed else data


_PIECE = 1 << 18


def _ndjson(data: bytes) -> pl.DataFrame:
    # (bytes are read in place; a BytesIO would be one more copy of the block)
    return pl.read_ndjson(data, schema=DECODE_SCHEMA, ignore_errors=True)


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
    # PREFIX_RE, read only up to the object's opening brace (the rest of a line is long)
    heads = others.str.extract_groups(_HEAD_RE)
    found = pl.DataFrame({"text": others, "head": heads.struct.field("1"), "time": heads.struct.field("3")}).select(
        (pl.col("head").is_not_null() & pl.col("text").str.ends_with("}")).alias("prefixed"),
        "head",
        "time",
        "text",
    )
    prefixed = found["prefixed"]
    body = found.select(pl.when("prefixed").then(pl.col("text").str.strip_prefix(pl.col("head")))).to_series()
    candidate = plain.clone().scatter(other_idx, prefixed) if other_idx.len() else plain
    cand_idx = candidate.arg_true()
    prefix_time = (
        constant(None, n, pl.Utf8)
        .scatter(other_idx, found.select(pl.when("prefixed").then("time")).to_series())
        .gather(cand_idx)
        if prefixed.any()
        else constant(None, cand_idx.len(), pl.Utf8)
    )
    rest = others.filter(~prefixed)
    rest_idx = other_idx.filter(~prefixed)
    blank_mask = rest.str.strip_chars() == ""
    blank = int(blank_mask.sum())
    rare = list(zip((rest_idx.filter(~blank_mask) + first_line).to_list(), rest.filter(~blank_mask).to_list(), strict=True))

    cut = (others.str.len_bytes() - body.str.len_bytes().fill_null(0)).to_list()
    buf = _blanked(data, lines, other_idx, cut) if other_idx.len() else data
    # read_ndjson refuses a whole block for one broken object (a cut line, an unescaped
    # quote) and accepts no invalid line (tests/unit/diagnose_ingest). Most blocks have
    # none, so the block is decoded as it is first; when refused, the suspect candidates
    # that orjson rejects are set aside, and if it is refused again, every candidate is checked.
    decoded = None
    for check in (_NONE, _SUSPECTS, _ALL):
        if check == _SUSPECTS:  # the candidates' objects, without their prefixes
            texts = lines.clone().scatter(other_idx.filter(prefixed), body.filter(prefixed)) if prefixed.any() else lines
        if check != _NONE:
            buf, bad = _without_invalid(buf, lines, texts, cand_idx, check == _SUSPECTS)
            if bad.len():
                keep = ~cand_idx.is_in(bad.implode())
                cand_idx, prefix_time = cand_idx.filter(keep), prefix_time.filter(keep)
                rare = sorted(rare + [(i + first_line, lines[i]) for i in bad.to_list()])
        try:
            decoded = _ndjson(buf) if cand_idx.len() else pl.DataFrame(schema=DECODE_SCHEMA)
            if decoded.height == cand_idx.len():
                break
        except pl.exceptions.PolarsError:
            if check == _ALL:
                raise
        decoded = None
    assert decoded is not None
    meta = pl.DataFrame(
        {
            "line": (cand_idx.cast(pl.Int64) + first_line),
            "raw": lines.gather(cand_idx),
            "keep_raw": constant(False, cand_idx.len(), pl.Boolean),
            "prefix_time": prefix_time,
            "status": constant("parsed", cand_idx.len(), pl.Utf8),
            "shape": constant(None, cand_idx.len(), pl.Utf8),
        },
        schema=META_SCHEMA,
    )
    # the rare lines away from the block's edges are read here
    start, end = _edge_runs(rare, first_line, first_line + n - 1)
    records, unparsed = recover(rare[start:end])
    block = Block(pl.DataFrame(), first_line, n, cand_idx.len(), blank, rare[:start] + rare[end:])
    if records:
        more, more_meta = recovered_input(records)
        for r in records:
            if r.status == REPAIRED:
                block.repaired_lines.append(r.line)
            else:
                block.recovered_parsed += r.span
    if unparsed:
        block.unparsed_lines = [line for line, _ in unparsed]
        frame = materialized(unparsed_frame(unparsed, file))
        block.unparsed = materialized(lean(frame)) if lean is not None else frame
    if records and lean is not None:  # one derive: the lean rows copy their texts out of the block
        rows = derive(pl.concat([decoded, more], rechunk=False), pl.concat([meta, more_meta], rechunk=False), file, lean)
    else:
        rows = derive(decoded, meta, file, lean)
        if records:  # (derived apart: one frame of both would keep more of the block's buffers alive)
            rows = pl.concat([rows, derive(more, more_meta, file, lean)])
    block.frame = rows  # in line order, then the recovered records: the caller sorts
    return block


_NONE, _SUSPECTS, _ALL = 0, 1, 2  # which candidates are checked with orjson before a decode


def _edge_runs(rare: list[tuple[int, str]], first: int, last: int) -> tuple[int, int]:
    """``(start, end)``: ``rare[:start]`` is the run of rare lines that begins the block,
    ``rare[end:]`` the run that ends it (a record there may span blocks); between them,
    every record lies whole inside the block."""
    end = len(rare)
    while end > 0 and rare[end - 1][0] == last - (len(rare) - end):
        end -= 1
    start = 0
    while start < end and rare[start][0] == first + start:
        start += 1
    return start, end


def recovered_input(records: list[Recovered]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``derive``'s two inputs (decoded records, meta) for records of the per-line path."""
    decoded = decode_records([orjson.dumps(r.record, default=str).decode("utf-8") for r in records])
    meta = pl.DataFrame(
        {
            "line": [r.line for r in records],
            "raw": [r.raw for r in records],
            "keep_raw": [True] * len(records),
            "prefix_time": [r.prefix_time for r in records],
            "status": [r.status for r in records],
            "shape": [r.shape for r in records],
        },
        schema=META_SCHEMA,
    )
    return decoded, meta


def _offsets(lines: pl.Series, indices: pl.Series) -> tuple[list[int], list[int]]:
    """Byte offset and length in the block of each listed line (lines end with one LF)."""
    lengths = lines.str.len_bytes().cast(pl.Int64)
    starts = (lengths + 1).cum_sum() - (lengths + 1)
    return starts.gather(indices).to_list(), lengths.gather(indices).to_list()


def _blanked(data: bytes, lines: pl.Series, indices: pl.Series, cuts: list[int] | None = None) -> bytes:
    """The block with the first ``cut`` bytes of each listed line (in line order; the whole
    line when ``cuts`` is None) replaced by spaces (one copy)."""
    starts, lengths = _offsets(lines, indices)
    view = memoryview(data)
    pieces: list[bytes | memoryview] = []
    done = 0
    for start, cut in zip(starts, lengths if cuts is None else cuts, strict=True):
        if cut:
            pieces += (view[done:start], b" " * cut)
            done = start + cut
    pieces.append(view[done:])
    return b"".join(pieces)


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
    quoted = constant(False, texts.len(), pl.Boolean).scatter(spaced, texts.gather(spaced).str.contains(_SUSPECT_QUOTE))
    return unbalanced | quoted


def _without_invalid(
    buf: bytes, lines: pl.Series, texts: pl.Series, cand_idx: pl.Series, suspects_only: bool
) -> tuple[bytes, pl.Series]:
    """Check candidates with orjson (only the suspect ones, or all) and blank the invalid ones.

    Returns the buffer and the indices of the lines set aside."""
    candidates = texts.gather(cand_idx)
    indices = cand_idx
    if suspects_only:
        mask = _suspects(candidates)
        candidates, indices = candidates.filter(mask), cand_idx.filter(mask)
    bad = [i for i, text in zip(indices.to_list(), candidates.to_list(), strict=True) if not _valid(text)]
    found = pl.Series(bad, dtype=cand_idx.dtype)
    if not bad:
        return buf, found
    return _blanked(buf, lines, found), found
