"""Ingest: node-autoscaler logs and Kubernetes Events into one normalised table.

``load(paths, events)`` reads files (plain or gzip), directories and stdin (``-``) and
returns the table of ``diagnose.schema.SCHEMA`` with the input statistics.

Log shapes read (all map onto the same columns): Karpenter alpha (2023-2024), v1, the
knative fallback lines, zap console encoding, AWS-provider Karpenter, this project's
own records (``event``, ``error.code``, ``quota`` taken as written), each optionally
behind ``kubectl logs --prefix`` and/or ``--timestamps``; pretty-printed JSON records over
several lines; almost-JSON lines (unescaped quotes inside a string), repaired and flagged.

Accounting: every physical line of every log input is counted exactly once, as
``parsed`` (a JSON record, or any line of a multi-line record), ``repaired``
(almost-JSON read after repair), ``unparsed`` (kept with its text, file and line number)
or ``blank`` (nothing but whitespace; no row in the table). So
``lines == parsed + repaired + unparsed + blank``. Events are counted in ``events``,
not in ``lines``. Invalid UTF-8 is replaced (U+FFFD) and still counted; a UTF-16 byte
order mark switches the input to UTF-16.

The table is sorted by time (rows without a time last), then input order, then line.
The ``raw`` column is kept only for rows that need it: unparsed, repaired, recovered by
the per-line path, and rows that carry an error or a warning.

Large inputs are read in blocks of whole lines; JSON lines are decoded in polars
without a Python loop per line (``json_lines``); only the rare other lines go through
Python (``rare_lines``). Memory stays bounded by the block size plus the table.

``load_lean(paths, events, keep=…)`` is the same read for a diagnosis: each block keeps
only the rows ``keep`` selects, in the compact types of ``lean.LEAN_SCHEMA``, as soon as
it is decoded, so memory follows the rows kept rather than the input size.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import BinaryIO

import polars as pl

from diagnose.findings import Evidence, InputStats
from diagnose.ingest import sources
from diagnose.ingest.columns import derive, materialized, unparsed_frame
from diagnose.ingest.json_lines import Block, decode_block, recovered_input
from diagnose.ingest.lean import LEAN_SCHEMA, lean_rows
from diagnose.ingest.rare_lines import Recovered, recover
from diagnose.ingest.sources import IngestError, Source, discover, whole_line_blocks
from diagnose.schema import REPAIRED, SCHEMA

__all__ = ["IngestError", "Ingested", "load", "load_lean", "parse_lines"]

_WORKERS = 3  # blocks decoded at a time: polars releases the interpreter lock, and three keep 2 cores busier than two


@dataclass
class Ingested:
    frame: pl.DataFrame  # columns exactly diagnose.schema.SCHEMA
    stats: InputStats


@dataclass
class _Tally:
    lines: int = 0
    parsed: int = 0
    repaired: int = 0
    unparsed: int = 0
    blank: int = 0
    events: int = 0
    files: list[str] = field(default_factory=list)
    unparsed_refs: list[Evidence] = field(default_factory=list)
    repaired_refs: list[Evidence] = field(default_factory=list)
    lean: Callable[[pl.DataFrame], pl.DataFrame] | None = None  # applied to each settled block (load_lean)
    timed: list[tuple[int, pl.DataFrame]] = field(default_factory=list)  # (input, rows with a time) per block
    untimed: list[tuple[int, pl.DataFrame]] = field(default_factory=list)  # (input, rows without), line order

    def stats(self) -> InputStats:
        return InputStats(
            lines=self.lines,
            parsed=self.parsed,
            repaired=self.repaired,
            unparsed=self.unparsed,
            files=self.files,
            events=self.events,
            unparsed_refs=self.unparsed_refs,
            repaired_refs=self.repaired_refs,
            blank=self.blank,
        )


def _recovered_frame(
    records: list[Recovered], file: str, lean: Callable[[pl.DataFrame], pl.DataFrame] | None
) -> pl.DataFrame:
    decoded, meta = recovered_input(records)
    return derive(decoded, meta, file, lean)


def _trailing_run(rare: list[tuple[int, str]], last_line: int) -> int:
    """Index where the run of rare lines that ends the block starts (a record may continue)."""
    k = len(rare)
    expected = last_line
    while k > 0 and rare[k - 1][0] == expected:
        k -= 1
        expected -= 1
    return k


def _settle(
    tally: _Tally,
    name: str,
    index: int,
    frame: pl.DataFrame | None,
    rare: list[tuple[int, str]],
    block: Block | None = None,
) -> None:
    """Recover the rare lines, then file the block's rows: timed rows in order, untimed apart."""
    parts = [frame] if frame is not None and frame.height else []
    if rare:
        records, unparsed = recover(rare)
        if records:
            parts.append(_recovered_frame(records, name, tally.lean))
        for r in records:
            if r.status == REPAIRED:
                tally.repaired += r.span
                tally.repaired_refs.append(Evidence(name, r.line))
            else:
                tally.parsed += r.span
        if unparsed:
            tally.unparsed += len(unparsed)
            tally.unparsed_refs.extend(Evidence(name, line) for line, _ in unparsed)
            tally.untimed.append((index, _leaner(tally, materialized(unparsed_frame(unparsed, name)))))
    if block is not None:  # the rare lines the block's worker read (after the ones above, in line order)
        tally.parsed += block.recovered_parsed
        tally.repaired += len(block.repaired_lines)
        tally.repaired_refs.extend(Evidence(name, line) for line in block.repaired_lines)
        tally.unparsed += len(block.unparsed_lines)
        tally.unparsed_refs.extend(Evidence(name, line) for line in block.unparsed_lines)
        if block.unparsed is not None:
            tally.untimed.append((index, block.unparsed))
    if not parts:
        return
    # (block and recovered rows are lean already when the tally is)
    joined = pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
    ordered = len(parts) == 1 and joined.select(
        pl.col("time").is_not_null().all() & (pl.col("time").diff().fill_null(pl.duration()) >= pl.duration()).all()
    ).item()
    if not ordered:
        joined = _sorted(joined)
    timed = joined.height - joined["time"].null_count()
    _append_timed(tally, index, joined.slice(0, timed))
    if timed < joined.height:
        tally.untimed.append((index, joined.slice(timed)))


def _leaner(tally: _Tally, frame: pl.DataFrame) -> pl.DataFrame:
    return materialized(tally.lean(frame)) if tally.lean is not None else frame


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    """Sorted by time then line; columns without a value come back as free null series."""
    return materialized(frame.sort(["time", "line"], nulls_last=True))


def _append_timed(tally: _Tally, index: int, frame: pl.DataFrame) -> None:
    """Append a block's timed rows (sorted), first moving into the previous block of the same
    input the rows that are earlier than its last time (clocks that step back a little)."""
    if frame.height and tally.timed and tally.timed[-1][0] == index:
        previous = tally.timed[-1][1]
        limit = previous["time"].tail(1)  # (a series: a Python datetime is converted through a query)
        early = int(frame["time"].search_sorted(limit, side="left")[0])
        if early:
            tally.timed[-1] = (index, _sorted(pl.concat([previous, frame.slice(0, early)])))
            frame = frame.slice(early)
    if frame.height:
        tally.timed.append((index, frame))


def _ingest(data_blocks: Iterator[bytes], name: str, index: int, tally: _Tally, after_block: Callable[[], None]) -> None:
    """Decode ``_WORKERS`` blocks at a time, settle them in order.

    Blocks are decoded with line numbers counted from the block's start and moved into
    place as they are settled: counting a block's lines before handing it over would hold
    the interpreter lock for milliseconds per block, which the decode threads wait on."""
    first_line = 1
    carried: list[tuple[int, str]] = []
    pending: deque[Future[Block]] = deque()

    def settle_one() -> None:
        nonlocal carried, first_line
        block = pending.popleft().result().shifted(first_line - 1)
        first_line += block.lines
        tally.lines += block.lines
        tally.parsed += block.parsed
        tally.blank += block.blank
        rare = carried + block.rare
        cut = _trailing_run(rare, block.first_line + block.lines - 1)
        rare, carried = rare[:cut], rare[cut:]
        _settle(tally, name, index, block.frame, rare, block)
        after_block()

    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        for data in data_blocks:
            pending.append(pool.submit(decode_block, data, 1, name, tally.lean))
            if len(pending) >= _WORKERS:
                settle_one()
        while pending:
            settle_one()
    _settle(tally, name, index, None, carried)


def _finish(tally: _Tally) -> Ingested:
    parts = [(index, f) for index, f in tally.timed + tally.untimed if f.height]
    tally.timed.clear()
    tally.untimed.clear()
    if not parts:
        return Ingested(pl.DataFrame(schema=SCHEMA if tally.lean is None else LEAN_SCHEMA), tally.stats())
    # every part has the same columns, each one chunk: the concatenation needs no copy
    frame = pl.concat([f for _, f in parts], how="vertical", rechunk=False)
    keys = pl.concat(
        [f.select("time", "line", pl.repeat(index, f.height, dtype=pl.Int32).alias("input")) for index, f in parts]
    )
    order = keys.select(pl.arg_sort_by(["time", "input", "line"], nulls_last=True).alias("o"))["o"]
    del parts, keys
    if not order.equals(pl.int_range(0, frame.height, dtype=pl.UInt32, eager=True).cast(order.dtype)):
        frame = frame[order]  # inputs overlap in time: one reordering copy
    return Ingested(frame, tally.stats())



def load(
    paths: Sequence[str],
    events: Sequence[str] = (),
    *,
    stdin: BinaryIO | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Ingested:
    """Read logs (files, .gz, directories, "-" for stdin) and Kubernetes Event dumps into one table.

    ``progress(done, total)`` is called after each block with input bytes read so far and
    the total size of the file inputs (stdin adds to ``done`` only). Raises IngestError."""
    return _load(paths, events, stdin, progress, None)


def load_lean(
    paths: Sequence[str],
    events: Sequence[str] = (),
    *,
    keep: pl.Expr,
    stdin: BinaryIO | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Ingested:
    """Like ``load``, but the table holds only the rows ``keep`` selects (an expression on
    SCHEMA columns), in the compact types of ``lean.LEAN_SCHEMA``; each block is reduced as
    it is read, so memory follows the rows kept, not the input size. The counts in
    ``stats`` are those of every line, as with ``load``."""
    return _load(paths, events, stdin, progress, lean_rows(keep))


def _load(
    paths: Sequence[str],
    events: Sequence[str],
    stdin: BinaryIO | None,
    progress: Callable[[int, int], None] | None,
    lean: Callable[[pl.DataFrame], pl.DataFrame] | None,
) -> Ingested:
    from diagnose.events import read_events  # events reuse ingest's error reading

    sources: list[Source] = discover(paths)
    total = sum(s.size for s in sources) + sum(_size(p) for p in events)
    tally = _Tally(files=[s.name for s in sources], lean=lean)
    done = [0]

    def counted(n: int) -> None:
        done[0] += n

    def after_block() -> None:
        if progress is not None:
            progress(done[0], total)

    for index, source in enumerate(sources):
        _ingest(whole_line_blocks(source, stdin, counted), source.name, index, tally, after_block)
    for k, path in enumerate(events):
        frame = read_events(path)
        tally.files.append(path)
        tally.events += frame.height
        if frame.height:
            _settle(tally, path, len(sources) + k, _leaner(tally, materialized(frame)), [])
        done[0] += _size(path)
        after_block()
    return _finish(tally)


def _size(path: str) -> int:
    from pathlib import Path

    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def parse_lines(lines: Iterable[str], file: str = "-") -> Ingested:
    """Ingest lines already in memory (tests, a live tail). Each item is one physical line."""
    text = "".join(line.removesuffix("\n").removesuffix("\r") + "\n" for line in lines)
    tally = _Tally(files=[file])
    data = text.encode("utf-8", errors="replace")
    _ingest(sources.line_blocks(iter([data]), sources.BLOCK_BYTES), file, 0, tally, lambda: None)
    return _finish(tally)
