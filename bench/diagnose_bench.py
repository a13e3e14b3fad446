"""How fast karp-diagnose explains a big log once it is ingested, against ingest itself.

Generates a mixed-shape log with ``bench/loggen.py`` (seeded), then times, in the same run:
ingest (the baseline), correlation, rules, redaction and the three renderings. Prints one
line per step and the analysis cost as a ratio of the ingest time.

Usage::

    python bench/diagnose_bench.py --size-mb 50
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loggen  # noqa: E402

from diagnose.correlate import correlate  # noqa: E402
from diagnose.ingest import load  # noqa: E402
from diagnose.redact import redact_report  # noqa: E402
from diagnose.render import render  # noqa: E402
from diagnose.rules import evaluate  # noqa: E402
from diagnose.api import analyse  # noqa: E402


def _timed(label: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    return result, elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "karpenter.log"
        loggen.generate(path, int(args.size_mb * 2**20), seed=args.seed)
        size = path.stat().st_size
        ingested, t_ingest = _timed("ingest", load, [str(path)])
    frame, stats = ingested.frame, ingested.stats
    correlation, t_correlate = _timed("correlate", correlate, frame)
    findings, t_rules = _timed("rules", evaluate, correlation)
    report, t_analyse = _timed("analyse", analyse, frame, stats)
    _, t_redact = _timed("redact", redact_report, report)
    t_render = {}
    for fmt in ("text", "json", "markdown"):
        _, t_render[fmt] = _timed(fmt, render, report, fmt, io.StringIO())
    print(f"input: {size / 2**20:.1f} MiB, {stats.lines:,} lines, {frame.height:,} rows, "
          f"{len(correlation.occurrences):,} error occurrences -> {len(findings)} findings")
    print(f"ingest (baseline)       {t_ingest:7.2f} s  {size / 2**20 / t_ingest:6.1f} MiB/s")
    print(f"correlate               {t_correlate:7.2f} s  {frame.height / t_correlate:9,.0f} rows/s")
    print(f"rules                   {t_rules:7.3f} s")
    print(f"analyse (all of it)     {t_analyse:7.2f} s  {t_analyse / t_ingest:5.2f}x the ingest time")
    print(f"redact report           {t_redact:7.3f} s")
    for fmt, seconds in t_render.items():
        print(f"render {fmt:<16} {seconds:7.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
