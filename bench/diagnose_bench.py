"""karp-diagnose on a big log: throughput and peak memory, against baselines measured in the same run.

Generates (or reuses, in ``bench/data/``) a seeded mixed-shape log with ``bench/loggen.py``
(default 1 GiB, about 0.1 % malformed lines, a few incidents), then measures, each in its
own subprocess so that every peak RSS is its own:

- ``baseline``: a bare polars line decode of the same file: read lines in blocks,
  validity mask (``str.json_path_match("$")``), ``str.json_decode`` of the valid ones
  against a fixed struct (the same superset of keys ingest uses);
- ``ingest``: ``diagnose.ingest.load`` alone;
- ``diagnose``: the full diagnosis as ``karp-diagnose`` runs it: ``diagnose.ingest.load_lean``
  (only the rows an analysis reads, compact types), ``diagnose.api.analyse`` (correlation
  with the routine rows summarised in polars, rules), rendering the report as text; then,
  on the same table, each analysis step on its own;
- ``jq``: ``jq -cR 'fromjson? | select(.level=="ERROR")'`` (the everyday alternative; the
  ``-R``/``fromjson?`` form is needed, plain ``jq`` stops at the first bad line), on a
  prefix of the file and scaled when the file is big.

Prints MB/s, the ratio of the full diagnosis to the baseline, peak RSS, and the load on
the machine before and after.

Usage::

    python bench/diagnose_bench.py                  # 1 GiB
    python bench/diagnose_bench.py --size-mb 100    # a quick run
    python bench/diagnose_bench.py --single-thread  # every step on one thread
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DATA = HERE / "data"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_baseline(path: str) -> dict[str, Any]:
    import polars as pl

    from diagnose.ingest.json_lines import _read_lines
    from diagnose.ingest.sources import Source, whole_line_blocks
    from diagnose.ingest.vocabulary import DECODE_SCHEMA

    struct = pl.Struct(DECODE_SCHEMA)
    start = time.perf_counter()
    cpu0 = _cpu()
    rows = 0
    for data in whole_line_blocks(Source(path, Path(path), 0), None, lambda n: None):
        lines, _ = _read_lines(data)
        decoded = (
            pl.LazyFrame({"text": lines})
            .with_row_index("line")
            .filter(pl.col("text").str.starts_with("{") & pl.col("text").str.json_path_match("$").is_not_null())
            .select("line", pl.col("text").str.json_decode(struct).alias("record"))
            .collect(engine="streaming")
        )
        rows += decoded.height
    return {"seconds": time.perf_counter() - start, "cpu": _cpu() - cpu0, "rows": rows, "peak_mb": _peak_mb()}


def child_ingest(path: str) -> dict[str, Any]:
    from diagnose.ingest import load

    start = time.perf_counter()
    cpu0 = _cpu()
    result = load([path])
    seconds = time.perf_counter() - start
    s = result.stats
    return {
        "seconds": seconds,
        "rows": result.frame.height,
        "lines": s.lines,
        "parsed": s.parsed,
        "repaired": s.repaired,
        "unparsed": s.unparsed,
        "blank": s.blank,
        "frame_mb": result.frame.estimated_size() / 2**20,
        "cpu": _cpu() - cpu0,
        "peak_mb": _peak_mb(),
    }


def child_diagnose(path: str) -> dict[str, Any]:
    from diagnose.api import ANALYSED, analyse
    from diagnose.correlate import _relevant, correlate
    from diagnose.ingest import load_lean
    from diagnose.redact import redact_report
    from diagnose.render import render
    from diagnose.routine import ROUTINE_COLUMNS, split
    from diagnose.rules import evaluate

    # the path karp-diagnose takes: lean ingest, analysis (summarised correlation, rules), text
    start = time.perf_counter()
    cpu0 = _cpu()
    ingested = load_lean([path], keep=ANALYSED)
    t_ingest = time.perf_counter() - start
    report = analyse(ingested.frame, ingested.stats)
    t_analyse = time.perf_counter() - start - t_ingest
    render(report, "text", io.StringIO())
    seconds = time.perf_counter() - start
    result: dict[str, Any] = {
        "seconds": seconds,
        "ingest_seconds": t_ingest,
        "analyse_seconds": t_analyse,
        "render_seconds": seconds - t_ingest - t_analyse,
        "findings": len(report.findings),
        "categories": sorted({f.category for f in report.findings}),
        "cpu": _cpu() - cpu0,
        "peak_mb": _peak_mb(),
        "rows": ingested.frame.height,
    }
    # the analysis steps one by one, after the end-to-end figures (same table)
    steps: dict[str, float] = {}
    mark = time.perf_counter()
    relevant = _relevant(ingested.frame, ROUTINE_COLUMNS)
    steps["select relevant rows"] = time.perf_counter() - mark
    mark = time.perf_counter()
    walked, _ = split(relevant)
    steps["summarise routine rows"] = time.perf_counter() - mark
    result["walked"] = walked.height
    result["relevant"] = relevant.height
    del relevant, walked
    mark = time.perf_counter()
    correlation = correlate(ingested.frame, summarise=True)
    steps["correlate (all)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    evaluate(correlation)
    steps["rules"] = time.perf_counter() - mark
    mark = time.perf_counter()
    redact_report(report)
    steps["redact"] = time.perf_counter() - mark
    for fmt in ("text", "json", "markdown"):
        mark = time.perf_counter()
        render(report, fmt, io.StringIO())
        steps[f"render {fmt}"] = time.perf_counter() - mark
    result["steps"] = steps
    return result


CHILDREN = {"baseline": child_baseline, "ingest": child_ingest, "diagnose": child_diagnose}


def _run_child(kind: str, path: Path, single_thread: bool = False) -> dict[str, Any]:
    env = dict(os.environ, POLARS_MAX_THREADS="1") if single_thread else None
    extra = ["--single-thread"] if single_thread else []
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--path", str(path), *extra],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _jq(path: Path, limit_bytes: int) -> dict[str, Any]:
    size = path.stat().st_size
    measured = min(size, limit_bytes)
    program = 'fromjson? | select(.level=="ERROR")'
    with path.open("rb") as source:
        data = source.read(measured)
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/jq", "-cR", program], input=data, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    errors = done.stdout.count(b"\n")
    return {
        "measured_mb": measured / 2**20,
        "seconds": seconds,
        "scaled_seconds": seconds * size / measured,
        "error_lines": errors,
        "returncode": done.returncode,
    }


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines()
        model = next((line.split(":", 1)[1].strip() for line in lscpu if line.startswith("Model name")), "?")
    except OSError:
        model = "?"
    return f"nproc {os.cpu_count()}, {model}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1024.0, help="log size in MiB (default 1024)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    parser.add_argument("--jq-limit-mb", type=float, default=100.0, help="run jq on at most this prefix, then scale")
    parser.add_argument(
        "--single-thread",
        action="store_true",
        help="run every step on one thread (POLARS_MAX_THREADS=1, one decode worker): how the work "
        "compares without parallel scaling",
    )
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        if args.single_thread:
            import diagnose.ingest

            diagnose.ingest._WORKERS = 1
        print(json.dumps(CHILDREN[args.child](args.path)))
        return 0

    import loggen

    path = DATA / f"karpenter-{args.size_mb:g}mb-seed{args.seed}.log"
    if not path.exists():
        started = time.perf_counter()
        lines = loggen.generate(path, int(args.size_mb * 2**20), seed=args.seed)
        print(f"generated {path} ({lines:,} lines) in {time.perf_counter() - started:.1f} s")
    mb = path.stat().st_size / 2**20
    print(f"machine: {_machine()}; load average before: {_load()}")
    print(f"input: {path.name}, {mb:,.1f} MiB")
    if args.single_thread:
        print("single-threaded: POLARS_MAX_THREADS=1 and one decode worker in every step")
    baseline = _run_child("baseline", path, args.single_thread)
    ingest = _run_child("ingest", path, args.single_thread)
    full = _run_child("diagnose", path, args.single_thread)
    jq = _jq(path, int(args.jq_limit_mb * 2**20))
    print(f"lines {ingest['lines']:,}: parsed {ingest['parsed']:,}, repaired {ingest['repaired']:,}, "
          f"unparsed {ingest['unparsed']:,}, blank {ingest['blank']:,}; table {ingest['rows']:,} rows")
    print(f"{'step':<34}{'seconds':>9}{'MiB/s':>9}{'CPU s':>9}{'peak RSS MiB':>14}")
    for label, run in (
        ("baseline: polars line decode", baseline),
        ("ingest (load)", ingest),
        ("full diagnosis (lean+analyse+text)", full),
    ):
        print(f"{label:<34}{run['seconds']:9.2f}{mb / run['seconds']:9.1f}{run['cpu']:9.2f}{run['peak_mb']:14.0f}")
    print(f"{'  of which ingest / analyse / render':<34} {full['ingest_seconds']:.2f} / "
          f"{full['analyse_seconds']:.2f} / {full['render_seconds']:.2f} s; findings {full['findings']}: "
          f"{', '.join(full['categories'])}")
    print(f"{'jq ERROR filter':<34}{jq['scaled_seconds']:9.2f}{mb / jq['scaled_seconds']:9.1f}{'-':>14}"
          f"   (measured on {jq['measured_mb']:.0f} MiB in {jq['seconds']:.2f} s, scaled; "
          f"{jq['error_lines']:,} ERROR lines in that part)")
    print(f"lean table {full['rows']:,} rows; correlation: {full['relevant']:,} relevant rows, "
          f"{full['walked']:,} walked in Python, the rest summarised in polars")
    print("analysis steps: " + "; ".join(f"{name} {seconds:.3f} s" for name, seconds in full["steps"].items()))
    ratio = baseline["seconds"] / full["seconds"]
    print(f"full diagnosis throughput / baseline throughput: {ratio:.2f} wall-clock, "
          f"{baseline['cpu'] / full['cpu']:.2f} by CPU time; ingest alone: "
          f"{baseline['seconds'] / ingest['seconds']:.2f} wall-clock, {baseline['cpu'] / ingest['cpu']:.2f} by CPU time")
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
