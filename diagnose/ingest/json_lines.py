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
    try:
        return pl.read_lines(data).to_series(), data
    except pl.exceptions.ComputeError:  # invalid UTF-8 somewhere in the block
        fixed = data.decode("utf-8", errors="replace").encode("utf-8")
        return pl.read_lines(fixed).to_series(), fixed


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


def decode_block(data: bytes, first_line: int, file: str) -> Block:
    """Rows for the candidate lines of ``data`` (whole lines), the rest as rare lines."""
    lines, data = _read_lines(data)
    n = lines.len()
    if n == 0:
        return Block(pl.DataFrame(), first_line, 0, 0, 0)
    frame = pl.DataFrame({"text": lines}).with_row_index("i")
    plain = lines.str.starts_with("{") & lines.str.ends_with("}")
    others = frame.filter(~plain)
    prefixed = others.with_columns(pl.col("text").str.extract_groups(PREFIX_RE).alias("g")).unnest("g")
    prefixed = prefixed.rename({"1": "pod_prefix", "2": "prefix_time", "3": "body"})
    cands = prefixed.filter(pl.col("body").is_not_null())
    rest = prefixed.filter(pl.col("body").is_null())
    blank_mask = rest["text"].str.strip_chars() == ""
    blank = int(blank_mask.sum())
    rare_rows = rest.filter(~blank_mask)
    rare = list(zip((rare_rows["i"] + first_line).to_list(), rare_rows["text"].to_list(), strict=True))

    # candidates in line order: plain lines and prefixed objects
    cand = pl.concat(
        [
            frame.filter(plain).select("i", "text", pl.lit(None, pl.Utf8).alias("prefix_time")),
            cands.select("i", "text", "prefix_time"),
        ]
    ).sort("i")
    buf = _blanked(data, lines, others, cands) if others.height else data
    try:
        decoded = _ndjson(buf)
        if decoded.height != cand.height:
            raise pl.exceptions.ComputeError("row count differs from candidate count")
    except pl.exceptions.PolarsError:
        cand, buf, more_rare = _drop_invalid(data, lines, cand)
        rare = sorted(rare + [(i + first_line, t) for i, t in more_rare])
        decoded = _ndjson(buf)
    meta = cand.select(
        (pl.col("i").cast(pl.Int64) + first_line).alias("line"),
        pl.col("text").alias("raw"),
        pl.lit(False).alias("keep_raw"),
        pl.col("prefix_time"),
        pl.lit("parsed").alias("status"),
        pl.lit(None, pl.Utf8).alias("shape"),
    )
    rows = derive(decoded, meta, file)
    return Block(rows, first_line, n, cand.height, blank, rare)


def _offsets(lines: pl.Series) -> tuple[list[int], list[int]]:
    lengths = lines.str.len_bytes().cast(pl.Int64)
    starts = (lengths + 1).cum_sum() - (lengths + 1)
    return starts.to_list(), lengths.to_list()


def _blanked(data: bytes, lines: pl.Series, others: pl.DataFrame, cands: pl.DataFrame) -> bytes | bytearray:
    """The block with every non-candidate line and every prefix overwritten by spaces."""
    if b"\r" in data:  # offsets from the split lines would be off by the CRs: rebuild instead
        return _rebuilt(lines, others, cands)
    starts, lengths = _offsets(lines)
    buf = bytearray(data)
    keep = dict(zip(cands["i"].to_list(), cands["body"].str.len_bytes().to_list(), strict=True))
    for i in others["i"].to_list():
        start, length = starts[i], lengths[i]
        body = keep.get(i)
        cut = length - body if body is not None else length
        if cut:
            buf[start : start + cut] = b" " * cut
    return buf


def _rebuilt(lines: pl.Series, others: pl.DataFrame, cands: pl.DataFrame) -> bytes:
    frame = pl.DataFrame({"text": lines}).with_row_index("i")
    bodies = others.select("i").join(cands.select("i", "body"), on="i", how="left")
    merged = frame.join(bodies, on="i", how="left").sort("i")
    text = pl.when(pl.col("i").is_in(others["i"].implode())).then(pl.col("body").fill_null("")).otherwise(pl.col("text"))
    joined: str = merged.select(text.str.join("\n")).item()
    return joined.encode("utf-8")


def _drop_invalid(
    data: bytes, lines: pl.Series, cand: pl.DataFrame
) -> tuple[pl.DataFrame, bytes, list[tuple[int, str]]]:
    """Check every candidate with orjson; invalid ones become rare lines."""
    bodies = cand.select(
        "i", pl.col("text").str.extract(PREFIX_RE, 3).fill_null(pl.col("text")).alias("body"), "prefix_time"
    )
    ok = [_valid(t) for t in bodies["body"].to_list()]
    mask = pl.Series(ok, dtype=pl.Boolean)
    bad = cand.filter(~mask)
    kept = cand.filter(mask)
    kept_bodies = bodies.filter(mask)
    text: str = kept_bodies.select(pl.col("body").str.join("\n")).item() if kept.height else ""
    return kept, text.encode("utf-8"), list(zip(bad["i"].to_list(), bad["text"].to_list(), strict=True))
