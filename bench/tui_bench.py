"""karp-tui update cost with 10,000 pending pods: diff-and-update versus rebuilding the table.

Drives the real app headless (``App.run_test``), loads a live-style snapshot of 10,000
pending pods (and 200 NodeClaims), then applies snapshot diffs where about 1% of the
pods changed (reasons and nominations change, some pods leave, new ones arrive; the
NodeClaims are read again whole) and measures each update: folding the diff into the
state and bringing every pane up to date (only the changed pods' rows are recomputed;
``update_cell`` on changed cells, one batched removal). The baseline, in the same run,
rebuilds the pending table from scratch (clear + add every row).

A second measure replays a generated log of ``--replay-records`` records: ingest, timeline,
fold to the end, analysis, and one step back to the middle (which folds again from the start).

Usage: .venv/bin/python bench/tui_bench.py [--pods 10000] [--updates 20] [--replay-records 90000]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tui.app import KarpTui
from tui.sources.analysis import findings_for
from tui.sources.replay import Timeline, load_frame
from tui.state import ClaimState, PendingPod, Snapshot
from tui.views import pending_rows
from tui.widgets.difftable import DiffTable

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
REASONS = ("0/3 nodes are available: 3 Insufficient cpu.", "0/3 nodes are available: 3 Insufficient memory.")


class FixedClock:
    def now(self) -> datetime:
        return NOW


def _pod(index: int, rng: random.Random) -> PendingPod:
    workload = f"shop-{index % 50}"
    return PendingPod(
        key=f"team-{index % 7}/{workload}-7d9c8f6b5-{index:05d}",
        workload=f"Deployment team-{index % 7}/{workload}",
        first_seen=NOW - timedelta(seconds=rng.randrange(30, 3000)),
        cpu_m=rng.choice((250, 500, 1000)),
        memory=rng.choice((256, 512, 1024)) * 2**20,
        scheduler_reason=rng.choice(REASONS),
        provisioner_reason="found provisionable",
        nodeclaim=f"general-purpose-{index % 200:05d}",
    )


def _claims() -> dict[str, ClaimState]:
    claims = {}
    for index in range(200):
        claim = ClaimState(f"general-purpose-{index:05d}", nodepool="general-purpose",
                           instance_type="Standard_D16ls_v5", vcpus=16, capacity_type="on-demand",
                           zone=f"westus2-{index % 3 + 1}", created=NOW - timedelta(minutes=5))
        if index % 4 == 0:
            claim.category, claim.quota_name, claim.quota_required = "regional-vcpu-quota", "cores", 16
            claim.last_error, claim.last_error_code = "exceeding approved Total Regional Cores quota", "OperationNotAllowed"
        claims[claim.name] = claim
    return claims


def _changed(
    pods: dict[str, PendingPod], rng: random.Random, next_index: int, share: float
) -> tuple[dict[str, PendingPod | None], int]:
    """The diff of a new reading where ``share`` of the pods changed: half edited, a quarter gone, a quarter new."""
    changes: dict[str, PendingPod | None] = {}
    count = max(int(len(pods) * share), 4)
    keys = rng.sample(sorted(pods), count)
    for key in keys[: count // 2]:
        pod = copy.copy(pods[key])
        pod.scheduler_reason = REASONS[1] if pod.scheduler_reason == REASONS[0] else REASONS[0]
        pod.nodeclaim = f"general-purpose-{rng.randrange(200):05d}"
        changes[key] = pod
    for key in keys[count // 2 : count * 3 // 4]:
        changes[key] = None
    for _ in range(count - count * 3 // 4):
        pod = _pod(next_index, rng)
        changes[pod.key] = pod
        next_index += 1
    return changes, next_index


async def run(pod_count: int, updates: int, share: float) -> None:
    rng = random.Random(7)
    pods = {p.key: p for p in (_pod(i, rng) for i in range(pod_count))}
    claims = _claims()
    app = KarpTui(clock=FixedClock())
    async with app.run_test(size=(160, 48)) as pilot:
        start = time.perf_counter()
        app.state.apply_snapshot(Snapshot(NOW, pods=dict(pods), claims=copy.deepcopy(claims)))
        app.render_state()
        first = time.perf_counter() - start
        await pilot.pause()
        table = app.query_one("#pending-table", DiffTable)
        assert len(table.shown) == pod_count

        timings, cpu_times, touched, painted = [], [], [], []
        next_index = pod_count
        for _ in range(updates):
            changes, next_index = _changed(pods, rng, next_index, share)
            for key, pod in changes.items():
                if pod is None:
                    pods.pop(key, None)
                else:
                    pods[key] = pod
            snapshot = Snapshot(NOW, pod_changes={k: copy.copy(p) for k, p in changes.items()},
                                claims=copy.deepcopy(claims))
            start, cpu = time.perf_counter(), time.process_time()
            app.state.apply_snapshot(snapshot)
            before = app.renders
            app.render_state()
            timings.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
            assert app.renders == before + 1
            touched.append(table.row_count)
            assert len(table.shown) == len(pods)
            start = time.perf_counter()
            await pilot.pause()  # the screen repaints what changed
            painted.append(time.perf_counter() - start)
        assert len(table.shown) == len(pods)

        rows = pending_rows(app.state, NOW)
        rebuilds = []
        for _ in range(3):
            start = time.perf_counter()
            table.clear()
            table._shown.clear()
            table.sync(rows)
            rebuilds.append(time.perf_counter() - start)
            await pilot.pause()

    per_update = statistics.median(timings)
    rebuild = statistics.median(rebuilds)
    print(f"pods: {pod_count}, NodeClaims: {len(claims)}, updates: {updates}, changed per update: {share:.0%}")
    print(f"first load (state + all panes, {pod_count} rows added): {first * 1000:.1f} ms")
    print(f"update (diff + update_cell), median: {per_update * 1000:.1f} ms, "
          f"p90: {sorted(timings)[int(len(timings) * 0.9) - 1] * 1000:.1f} ms, max: {max(timings) * 1000:.1f} ms")
    print(f"update, CPU time of this process, median: {statistics.median(cpu_times) * 1000:.1f} ms")
    print(f"repaint after an update, median: {statistics.median(painted) * 1000:.1f} ms")
    print(f"baseline: rebuild the pending table, median: {rebuild * 1000:.1f} ms")
    print(f"rebuild / update: {rebuild / per_update:.1f}x")
    print(f"under 50 ms per update: {'yes' if per_update < 0.050 else 'NO'}")


def replay(records: int) -> None:
    """Replay cost: ingest a generated log (the founding log's first 9 lines, repeated with new
    NodeClaim names and times), build the timeline, fold it to the end, run the analysis."""
    seed = (Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log")
    template = seed.read_text().splitlines()[:9]
    start_at = datetime(2023, 11, 24, 15, 17, 48, tzinfo=UTC)
    with tempfile.TemporaryDirectory(prefix="karp-tui-bench-") as folder:
        path = Path(folder) / "replay.log"
        with path.open("w") as out:
            for index in range(max(records // len(template), 1)):
                for text in template:
                    record = json.loads(text)
                    record["time"] = (start_at + timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
                    if isinstance(record.get("nodeclaim"), str):
                        record["nodeclaim"] = f"general-purpose-{index:06d}"
                    out.write(json.dumps(record) + "\n")
        size = path.stat().st_size
        t0 = time.perf_counter()
        frame, stats = load_frame([str(path)])
        t1 = time.perf_counter()
        timeline = Timeline(frame, stats)
        t2 = time.perf_counter()
        state = timeline.state_at(len(timeline))
        t3 = time.perf_counter()
        findings_for(timeline.head(len(timeline)))
        t4 = time.perf_counter()
        timeline.state_at(len(timeline) // 2)
        t5 = time.perf_counter()
    print(f"replay: {len(timeline)} records, {size / 1e6:.1f} MB, {len(state.claims)} NodeClaims")
    print(f"  ingest {t1 - t0:.2f} s, timeline {t2 - t1:.2f} s, fold to the end {t3 - t2:.2f} s, "
          f"analysis {t4 - t3:.2f} s, step back to the middle {t5 - t4:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--share", type=float, default=0.01, help="fraction of pods changed per update")
    parser.add_argument("--replay-records", type=int, default=90_000, help="records of the replay measure (0: skip)")
    args = parser.parse_args()
    asyncio.run(run(args.pods, args.updates, args.share))
    if args.replay_records:
        replay(args.replay_records)


if __name__ == "__main__":
    main()
