"""Every physical line is counted once; bad input is kept, not lost; bad paths are named."""

from __future__ import annotations

import gzip
import io
import re
from pathlib import Path

import pytest

from diagnose.findings import InputStats
from diagnose.ingest import IngestError, load, parse_lines
from provisioner.model.errors import InputError

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs"
SEED = LOGS / "seed-karpenter-2023-11-24.log"
GOOD = '{"level":"INFO","time":"2024-08-04T21:21:30.102Z","logger":"controller","message":"launched nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"a-1"}}'


def balanced(stats: InputStats) -> bool:
    return stats.lines == stats.parsed + stats.repaired + stats.unparsed + stats.blank


def test_malformed_fixture(tmp_path: Path) -> None:
    result = load([str(LOGS / "karpenter-malformed.log")])
    stats = result.stats
    assert balanced(stats)
    assert (stats.lines, stats.parsed, stats.unparsed, stats.blank) == (12, 3, 8, 1)
    unparsed = result.frame.filter(result.frame["parse_status"] == "unparsed")
    assert unparsed["line"].to_list() == [e.line for e in stats.unparsed_refs] == [2, 3, 5, 6, 7, 8, 9, 11]
    garbage = unparsed.filter(unparsed["line"] == 11)["raw"][0]
    assert "\ufffd" in garbage and "binary garbage" in garbage
    latin1 = result.frame.filter(result.frame["line"] == 12)["message"][0]
    assert latin1 == "caf\ufffd latin-1 text"


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    result = load([str(empty)])
    assert result.stats.lines == 0 and result.frame.height == 0 and balanced(result.stats)


def test_blank_lines_are_counted_apart() -> None:
    stats = parse_lines([GOOD, "", "   \t", GOOD]).stats
    assert (stats.lines, stats.parsed, stats.blank, stats.unparsed) == (4, 2, 2, 0)


def test_truncated_and_invalid_objects_among_good_lines() -> None:
    lines = [GOOD] * 50 + ['{"level":"INFO" "message":"no colon"}', GOOD[:40], '{"a": [1, 2}'] + [GOOD] * 50
    result = parse_lines(lines)
    assert balanced(result.stats)
    assert result.stats.parsed == 100 and result.stats.unparsed == 3
    assert [e.line for e in result.stats.unparsed_refs] == [51, 52, 53]


# Objects that look whole ({ … }) but are not valid JSON. A block is first decoded without
# any check: that is sound only because the decoder refuses each of these, so the block
# falls back to checking its candidates one by one.
INVALID_OBJECTS = [
    '{"message":"a "quoted" b"}',
    '{"message":"a","x":{"y":1}',
    '{"message":"a",}',
    '{"message":NaN}',
    '{"message":"a"}{"message":"b"}',
    '{"message":"a"} x}',
    '{message:"a"}',
    "{'message':'a'}",
    '{"message":"a","n":01}',
    '{"message":"a\\q"}',
    '{"message":"a","t":tru}',
    '{"message":"a"}}',
    '{"message":"tab\there"}',
]


@pytest.mark.parametrize("bad", INVALID_OBJECTS)
def test_invalid_objects_are_refused_by_the_block_decoder(bad: str) -> None:
    import polars as pl

    from diagnose.ingest.json_lines import _ndjson

    with pytest.raises(pl.exceptions.PolarsError):
        _ndjson(f"{GOOD}\n{bad}\n{GOOD}\n".encode())
    result = parse_lines([GOOD] * 20 + [bad] + [GOOD] * 20)
    assert balanced(result.stats)
    assert (result.stats.parsed, result.stats.unparsed) == (40, 1)
    assert [e.line for e in result.stats.unparsed_refs] == [21]


def test_five_megabyte_line(tmp_path: Path) -> None:
    huge = '{"level":"ERROR","message":"failed launching nodeclaim","error":"' + "x" * (5 << 20) + '"}'
    path = tmp_path / "huge.log"
    path.write_text("\n".join([GOOD, huge, "y" * (5 << 20), GOOD]) + "\n")
    result = load([str(path)])
    assert (result.stats.lines, result.stats.parsed, result.stats.unparsed) == (4, 3, 1)
    big = result.frame.filter(result.frame["line"] == 2)
    assert len(big["error_message"][0]) == 5 << 20


def test_latin1_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.log"
    path.write_bytes((GOOD[:-1] + ',"note":"Größe"}\n').encode("latin-1") + b"Fehler: Gr\xf6\xdfe\n")
    result = load([str(path)])
    assert (result.stats.parsed, result.stats.unparsed) == (1, 1)
    assert result.frame.filter(result.frame["line"] == 2)["raw"][0] == "Fehler: Gr\ufffd\ufffde"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_with_bom(tmp_path: Path, encoding: str) -> None:
    text = SEED.read_text(encoding="utf-8")
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    path = tmp_path / "utf16.log"
    path.write_bytes(data)
    stats = load([str(path)]).stats
    assert (stats.lines, stats.parsed, stats.repaired) == (10, 9, 1)


def test_gzip_by_magic_and_concatenated_members(tmp_path: Path) -> None:
    path = tmp_path / "logs.bin"  # no .gz suffix: recognised by its magic bytes
    path.write_bytes(gzip.compress(SEED.read_bytes()[:2000]) + gzip.compress(SEED.read_bytes()[2000:]))
    stats = load([str(path)]).stats
    assert (stats.lines, stats.parsed, stats.repaired) == (10, 9, 1)


def test_broken_gzip_is_named(tmp_path: Path) -> None:
    path = tmp_path / "broken.log.gz"
    path.write_bytes(gzip.compress(b"x" * 1000)[:20] + b"\x00" * 20)
    with pytest.raises(IngestError, match=re.escape("broken.log.gz")):
        load([str(path)])


def test_directory_recursion_order_and_suffixes(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.jsonl").write_text(GOOD + "\n")
    (tmp_path / "a.log").write_text(GOOD + "\n" + GOOD + "\n")
    (tmp_path / "c.log.gz").write_bytes(gzip.compress((GOOD + "\n").encode()))
    (tmp_path / "notes.md").write_text("ignored\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    result = load([str(tmp_path)])
    assert result.stats.files == [str(tmp_path / "a.log"), str(tmp_path / "b" / "two.jsonl"), str(tmp_path / "c.log.gz")]
    assert result.stats.lines == 4 and result.stats.parsed == 4


def test_stdin(tmp_path: Path) -> None:
    result = load(["-"], stdin=io.BytesIO(gzip.compress(SEED.read_bytes())))
    assert result.stats.files == ["-"]
    assert set(result.frame["file"]) == {"-"}
    assert (result.stats.lines, result.stats.repaired) == (10, 1)


def test_errors_name_the_input(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=re.escape("nope.log: no such file")):
        load([str(tmp_path / "nope.log")])
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.md").write_text("x")
    with pytest.raises(IngestError, match=re.escape("docs: directory has no log files")):
        load([str(tmp_path / "docs")])
    assert issubclass(IngestError, InputError)


def test_unreadable_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.log"
    path.write_text(GOOD)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(IngestError, match=re.escape("secret.log: cannot read: Permission denied")):
        load([str(path)])


def test_progress_reports_bytes(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    load([str(SEED)], progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (SEED.stat().st_size, SEED.stat().st_size)


def test_multiple_inputs_merge_by_time(tmp_path: Path) -> None:
    early = tmp_path / "early.log"
    late = tmp_path / "late.log"
    late.write_text('{"level":"INFO","time":"2024-01-01T00:00:03Z","message":"c"}\n')
    early.write_text(
        '{"level":"INFO","time":"2024-01-01T00:00:01Z","message":"a"}\n'
        '{"level":"INFO","time":"2024-01-01T00:00:05Z","message":"d"}\n'
        "text\n"
    )
    frame = load([str(late), str(early)]).frame
    assert frame["message"].to_list() == ["a", "c", "d", None]
    assert frame["file"].to_list()[-1] == str(early)
