"""List and watch throughput of 10,000 pods through the official client: raw JSON vs typed models.

Runs the Kubernetes emulator in-process (scheduler and kubelet off), fills it with
pods shaped like a Deployment's, and times four reads over loopback HTTP:

- typed list:  CoreV1Api.list_pod_for_all_namespaces() (pydantic models)
- raw list:    the same request through provisioner.kube.connection.RawApi (orjson dicts)
- typed watch: watch.Watch().stream(list_pod_for_all_namespaces, resource_version="0")
- raw watch:   RawApi.watch_lines(... resourceVersion=0), the Informer's path

Each figure is the best of --repeat runs, in objects per second; ratios are raw/typed
measured in the same run. Usage: .venv/bin/python bench/kube_bench.py [--pods 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from kubernetes import client, config, watch

from provisioner.kube.connection import PODS, RawApi
from sim.kube.emulator import KubeEmulator


def _pod(n: int) -> dict:
    return {
        "metadata": {"name": f"inflate-74ccd665f4-{n:05d}", "namespace": "default",
                     "labels": {"app": "inflate", "pod-template-hash": "74ccd665f4"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "inflate-74ccd665f4",
                                          "uid": "8a0e3b1c-0000-4000-8000-000000000001", "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"containers": [{"name": "inflate", "image": "mcr.microsoft.com/oss/kubernetes/pause:3.6",
                                 "resources": {"requests": {"cpu": "1", "memory": "256M"}}}],
                 "schedulerName": "default-scheduler", "restartPolicy": "Always", "terminationGracePeriodSeconds": 0,
                 "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None,
             "lastTransitionTime": "2026-11-29T10:00:00Z",
             "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}]},
    }


def _best(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = run()
        best = min(best, time.perf_counter() - started)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with KubeEmulator(scheduler=False, kubelet_enabled=False, workloads=False, crds=[]) as kube:
        pods = kube.kind("pods")
        for n in range(args.pods):
            kube.store.create(pods, "default", _pod(n))
        api = config.new_client_from_config(kube.kubeconfig)
        v1 = client.CoreV1Api(api)
        raw = RawApi(api, request_timeout=120)

        def typed_list() -> int:
            return len(v1.list_pod_for_all_namespaces(_request_timeout=120).items)

        def raw_list() -> int:
            return len(raw.call("GET", PODS.path())["items"])

        def typed_watch() -> int:
            seen = 0
            w = watch.Watch()
            for _ in w.stream(v1.list_pod_for_all_namespaces, resource_version="0", timeout_seconds=60):
                seen += 1
                if seen == args.pods:
                    w.stop()
            return seen

        def raw_watch() -> int:
            seen = 0
            for _ in raw.watch_lines(PODS.path(), {"resourceVersion": "0", "timeoutSeconds": 60}, timeout=120):
                seen += 1
                if seen == args.pods:
                    break
            return seen

        results = {name: _best(args.repeat, fn) for name, fn in
                   (("typed list", typed_list), ("raw list", raw_list), ("typed watch", typed_watch), ("raw watch", raw_watch))}
        api.close()
    print(f"python {platform.python_version()}, {args.pods} pods, best of {args.repeat}")
    for name, (seconds, count) in results.items():
        assert count == args.pods, f"{name}: saw {count} objects"
        print(f"{name:<12} {seconds * 1000:8.0f} ms  {count / seconds:10,.0f} objects/s")
    print(f"raw/typed list  {results['typed list'][0] / results['raw list'][0]:.1f}x")
    print(f"raw/typed watch {results['typed watch'][0] / results['raw watch'][0]:.1f}x")


if __name__ == "__main__":
    main()
