"""The vectorised path and the per-line path read the same record into the same row."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnose.ingest import load, parse_lines
from diagnose.ingest import sources as ingest_sources

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs"
POOL = [
    line
    for name in (
        "seed-karpenter-2023-11-24.log",
        "karpenter-v1-azure-2024-08-04.log",
        "karpenter-v07-fallback-2024-11-08.log",
        "karpenter-aws-v1-2024-09-12.log",
        "karp-provisioner-2026-11-29.log",
    )
    for line in (LOGS / name).read_text(encoding="utf-8").splitlines()[:9]
    if line.startswith("{")
]
CONTENT = [
    "source", "time", "level", "component", "message", "event", "pods", "pod_count", "nodepool", "nodeclaim",
    "node", "instance_type", "instance_types_count", "zone", "capacity_type", "error_code", "error_message",
    "category", "quota_scope", "quota_name", "quota_limit", "quota_usage", "quota_required", "quota_new_limit",
    "region", "requests_cpu_m", "requests_memory", "requests_pods",
]


def variant(line: str, how: str) -> list[str]:
    if how == "plain":
        return [line]
    if how == "prefixed":  # vectorised, behind kubectl prefixes
        return [f"[pod/karpenter-6f7d9c8b5-x2k4q/controller] 2024-08-04T21:21:30.102000000Z {line}"]
    if how == "trailing-blank":  # per-line path: not a bare object
        return [line + "   "]
    return json.dumps(json.loads(line), indent=2, ensure_ascii=False).splitlines()  # per-line, multi-line


def content(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r[c] for c in CONTENT) for r in rows]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(range(len(POOL))), st.sampled_from(
    ["plain", "prefixed", "trailing-blank", "pretty"])), min_size=1, max_size=12))
def test_same_rows_whatever_the_path(picks: list[tuple[int, str]]) -> None:
    lines: list[str] = []
    firsts: list[int] = []
    for k, how in picks:
        firsts.append(len(lines) + 1)
        lines += variant(POOL[k], how)
    mixed = parse_lines(lines)
    plain = parse_lines([POOL[k] for k, _ in picks])
    assert mixed.stats.lines == len(lines) and mixed.stats.unparsed == 0
    by_first = {r["line"]: r for r in mixed.frame.to_dicts()}
    plain_rows = sorted(plain.frame.to_dicts(), key=lambda r: r["line"])
    assert content([by_first[f] for f in firsts]) == content(plain_rows)


def test_records_across_block_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny blocks: pretty-printed records split over blocks, and line numbers stay exact."""
    monkeypatch.setattr(ingest_sources, "BLOCK_BYTES", 700)
    lines: list[str] = []
    for k, line in enumerate(POOL * 3):
        lines += variant(line, ["plain", "pretty", "prefixed", "trailing-blank"][k % 4])
    lines += ["not json at all", ""]
    path = tmp_path / "mixed.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    small = load([str(path)])
    monkeypatch.setattr(ingest_sources, "BLOCK_BYTES", 32 << 20)
    whole = load([str(path)])
    assert small.stats.lines == whole.stats.lines == len(lines)
    assert (small.stats.parsed, small.stats.repaired, small.stats.unparsed, small.stats.blank) == (
        whole.stats.parsed, whole.stats.repaired, whole.stats.unparsed, whole.stats.blank,
    )
    assert small.frame.drop("raw").equals(whole.frame.drop("raw"))
    assert small.frame.height == len(POOL) * 3 + 1


def test_clock_steps_back_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_sources, "BLOCK_BYTES", 200)
    seconds = [1, 2, 3, 5, 4, 6, 7, 6, 8, 9, 10, 9, 11, 12]
    lines = [
        f'{{"level":"INFO","time":"2024-01-01T00:00:{s:02d}Z","message":"m{k}"}}' for k, s in enumerate(seconds)
    ]
    frame = parse_lines(lines).frame
    assert frame["time"].is_sorted()
    assert frame["line"].to_list() == [1, 2, 3, 5, 4, 6, 8, 7, 9, 10, 12, 11, 13, 14]


@pytest.mark.parametrize("seed", range(5))
def test_line_blocks_keep_every_byte_and_end_on_a_newline(seed: int) -> None:
    import random

    from diagnose.ingest.sources import line_blocks

    rng = random.Random(seed)
    text = b"".join(b"x" * rng.choice([0, 1, 5, 40, 300]) + b"\n" for _ in range(400)) + b"tail without newline"
    cuts = sorted(rng.sample(range(1, len(text)), 30))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    blocks = list(line_blocks(iter(pieces), size=rng.choice([1, 64, 500, 5000])))
    assert b"".join(blocks) == text
    assert all(block.endswith(b"\n") for block in blocks[:-1]) and blocks[-1].endswith(b"tail without newline")
    assert all(isinstance(block, bytes) for block in blocks)


@pytest.mark.parametrize("seed", range(5))
def test_plain_files_are_read_in_whole_lines_without_losing_a_byte(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import random

    from diagnose.ingest import sources
    from diagnose.ingest.sources import Source, whole_line_blocks

    rng = random.Random(seed)
    # lines longer than the look-back window and than a block, empty lines, no final newline
    text = b"".join(b"x" * rng.choice([0, 1, 5, 40, 300, 3000]) + b"\n" for _ in range(300)) + b"tail"
    path = tmp_path / "plain.log"
    path.write_bytes(codecs.BOM_UTF8 + text if seed % 2 else text)
    monkeypatch.setattr(sources, "BLOCK_BYTES", rng.choice([1, 64, 500, 5000]))
    monkeypatch.setattr(sources, "_PEEK", rng.choice([1, 16, 256]))

    def pieced(*_: object) -> None:
        raise AssertionError("a plain file is read in whole lines, not copied together from pieces")

    monkeypatch.setattr(sources, "line_blocks", pieced)
    counted: list[int] = []
    blocks = list(whole_line_blocks(Source("plain.log", path, path.stat().st_size), None, counted.append))
    assert b"".join(blocks) == text
    assert all(block.endswith(b"\n") for block in blocks[:-1]) and blocks[-1].endswith(b"tail")
    assert sum(counted) == path.stat().st_size  # progress reaches the file's size (a BOM included)
    assert len(blocks) > 1


def test_gzip_and_utf16_files_take_the_decoding_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    from diagnose.ingest import sources
    from diagnose.ingest.sources import Source, whole_line_blocks

    monkeypatch.setattr(sources, "BLOCK_BYTES", 64)
    text = "".join(f'{{"message":"line {k} é"}}\n' for k in range(50))
    zipped, wide = tmp_path / "a.log.gz", tmp_path / "b.log"
    zipped.write_bytes(gzip.compress(text.encode("utf-8")))
    wide.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    for path in (zipped, wide):
        blocks = list(whole_line_blocks(Source(path.name, path, path.stat().st_size), None, lambda n: None))
        assert b"".join(blocks).decode("utf-8") == text
        assert all(block.endswith(b"\n") for block in blocks)


def test_a_named_pipe_is_read_like_the_file(tmp_path: Path) -> None:
    import os
    import threading

    text = "".join(f'{{"level":"INFO","time":"2024-01-01T00:00:{k:02d}Z","message":"m{k}"}}\n' for k in range(40))
    path, pipe = tmp_path / "a.log", tmp_path / "pipe.log"
    path.write_text(text)
    os.mkfifo(pipe)

    def write() -> None:
        with pipe.open("w") as out:
            out.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    from_pipe = load([str(pipe)])
    writer.join()
    from_file = load([str(path)])
    assert from_pipe.stats.lines == from_file.stats.lines == 40
    assert from_pipe.frame.drop("file").equals(from_file.frame.drop("file"))
