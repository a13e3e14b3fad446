"""ARM emulator throughput on loopback, through the real SDK clients.

Prints calls per second for:
- the usages API read with a plain ``requests`` session (the baseline: HTTP + TLS + JSON only),
- the same read through ``ComputeManagementClient`` (``AzureCompute.read_quota``),
- full VM creates through ``AzureCompute`` (NIC PUT + its operation + NIC GET, VM PUT + its
  operation + VM GET: 6 HTTP calls each), one at a time and 16 in flight,
- VM deletes.

Usage: .venv/bin/python bench/arm_bench.py [--calls 300] [--vms 100]
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import requests
from azure.core.credentials import AccessToken

from provisioner.azure import AzureCompute, AzureConfig
from provisioner.model.ports import NicSpec, VmSpec
from sim.arm import ArmEmulator


class _Credential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("bench", int(time.time()) + 3600)


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:8.0f}/s  ({seconds / count * 1000:.2f} ms each)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--vms", type=int, default=100)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}")
    with ArmEmulator(quotas={"cores": 1_000_000, "standardDSv5Family": 1_000_000}) as arm:
        info = arm.endpoint
        url = (f"{info.endpoint}/subscriptions/{info.subscription}/providers/Microsoft.Compute/locations/"
               f"{info.location}/usages?api-version=2026-04-01")
        session = requests.Session()
        session.headers["Authorization"] = "Bearer bench"
        session.get(url, verify=info.ca_cert).raise_for_status()
        started = time.perf_counter()
        for _ in range(args.calls):
            session.get(url, verify=info.ca_cert).raise_for_status()
        raw = time.perf_counter() - started
        print(f"usages, raw requests session     {_rate(args.calls, raw)}")

        config = AzureConfig.for_emulator(info.as_dict(), _Credential())
        with AzureCompute(config) as compute:
            compute.read_quota()
            started = time.perf_counter()
            for _ in range(args.calls):
                compute.read_quota()
            sdk = time.perf_counter() - started
            print(f"usages, SDK (read_quota)         {_rate(args.calls, sdk)}   {sdk / raw:.1f}x the raw time")

            def create(name: str) -> Any:
                nic = compute.create_nic(NicSpec(name, info.subnet_id))
                return compute.begin_create_vm(VmSpec(name, "Standard_D2s_v5", nic.id, "/img"))

            started = time.perf_counter()
            for i in range(args.vms):
                create(f"aks-seq-{i}").result(timeout=30)
            sequential = time.perf_counter() - started
            print(f"VM create, one at a time         {_rate(args.vms, sequential)}")

            started = time.perf_counter()
            handles = [create(f"aks-par-{i}") for i in range(args.vms)]
            for handle in handles:
                handle.result(timeout=60)
            parallel = time.perf_counter() - started
            print(f"VM create, NIC sequential + 16 VM creates in flight {_rate(args.vms, parallel)}")

            started = time.perf_counter()
            for i in range(args.vms):
                compute.delete_vm(f"aks-seq-{i}")
            deletes = time.perf_counter() - started
            print(f"VM delete, one at a time         {_rate(args.vms, deletes)}")
        print(f"requests served: {len(arm.request_log)}")


if __name__ == "__main__":
    main()
