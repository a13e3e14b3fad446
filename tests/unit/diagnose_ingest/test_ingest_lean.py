"""The lean ingest: the rows an analysis reads, compact types, the same counts; UTF-8 repair by piece."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from diagnose.api import ANALYSED
from diagnose.ingest import load, load_lean
from diagnose.ingest.json_lines import _suspects, _valid_utf8
from diagnose.ingest.lean import CATEGORICAL, LEAN_SCHEMA

ROOT = Path(__file__).resolve().parents[3]
MALFORMED = ROOT / "fixtures" / "logs" / "karpenter-malformed.log"
SEED = ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log"


def _lean_schema(frame: pl.DataFrame) -> bool:
    return frame.columns == list(LEAN_SCHEMA) and all(frame.schema[k] == v for k, v in LEAN_SCHEMA.items())


@pytest.mark.parametrize("path", [SEED, MALFORMED], ids=lambda p: p.name)
def test_lean_keeps_the_analysed_rows_with_the_same_values_and_counts(path: Path) -> None:
    full, lean = load([str(path)]), load_lean([str(path)], keep=ANALYSED)
    assert lean.stats == full.stats
    assert _lean_schema(lean.frame)
    expected = full.frame.filter(ANALYSED)
    assert 0 < lean.frame.height == expected.height < full.frame.height
    as_text = lean.frame.with_columns(pl.col(name).cast(pl.Utf8) for name in CATEGORICAL)
    assert as_text.rows() == expected.rows()


def test_lean_reports_progress_and_reads_events(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    events = ROOT / "fixtures" / "events" / "kubectl-get-events-2023-11-24.json"
    lean = load_lean([str(SEED)], [str(events)], keep=ANALYSED, progress=lambda done, total: seen.append((done, total)))
    assert lean.stats.events > 0 and "event" in lean.frame["source"].cast(pl.Utf8).to_list()
    assert seen and seen[-1][0] == seen[-1][1] == SEED.stat().st_size + events.stat().st_size


def test_an_empty_lean_table_has_the_lean_schema(tmp_path: Path) -> None:
    path = tmp_path / "quiet.log"
    path.write_text('{"level":"DEBUG","time":"2024-01-01T00:00:00Z","message":"discovered subnets"}\n')
    lean = load_lean([str(path)], keep=ANALYSED)
    assert lean.frame.height == 0 and lean.stats.parsed == 1
    assert _lean_schema(lean.frame)


@pytest.mark.parametrize(
    "data",
    [b"", b"plain ascii\n", b"caf\xc3\xa9 \xe2\x80\x98ok\xe2\x80\x99\n", b"a\n\xff\xfe bad\nb\xc3\n", b"x\xe2\x80\ny\n",
     b"\xe2\x80\x98\n" * 200_000 + b"tail \x80\n"],
    ids=["empty", "ascii", "valid-utf8", "invalid", "cut-sequence", "far-piece"],
)
def test_utf8_repair_by_piece_matches_replacing_in_the_whole_block(data: bytes) -> None:
    assert _valid_utf8(data) == data.decode("utf-8", errors="replace").encode("utf-8")


def test_suspect_objects_include_unescaped_quotes_and_cut_lines() -> None:
    texts = pl.Series(['{"a":"x" y"}', '{"a":"b"}', '{"a":"x"\tz"}', '{"a":"x\\" y"}', '{"a":{"b":1}', '{"a":[1}'])
    assert _suspects(texts).to_list() == [True, False, True, False, True, True]


@pytest.mark.parametrize("given", [None, "dirty_decay_ms:5000"])
def test_importing_diagnose_sets_the_allocator_decay_unless_given(given: str | None) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    if given is not None:
        env["_RJEM_MALLOC_CONF"] = given
    out = subprocess.run(
        [sys.executable, "-c", "import os, diagnose; print(os.environ['_RJEM_MALLOC_CONF'])"],
        env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == (given or "dirty_decay_ms:1000,muzzy_decay_ms:0")
