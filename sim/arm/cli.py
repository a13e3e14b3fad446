"""``karp-sim arm``: serve the ARM emulator until interrupted.

Prints one JSON line on stdout once it listens (endpoint, CA file, subscription, resource
group, location, subnet id), so a script can read it and point the SDKs at it.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from sim.arm.emulator import DEFAULT_SUBSCRIPTION, ArmEmulator
from sim.arm.faults import FaultPlan, load_faults
from sim.arm.state import Timings

__all__ = ["main"]

EPILOG = """examples:
  karp-sim arm
  karp-sim arm --location westus2 --quota cores=20 --usage cores=14
  karp-sim arm --quota standardDLSv5Family=100 --quota lowPriorityCores=50 --faults faults.yaml
  karp-sim arm --vm-create-delay 2 --quota-ceiling 500 --quota-request-delay 5

The first stdout line is JSON:
  {"endpoint": "https://127.0.0.1:PORT", "ca_cert": "/tmp/karp-arm-ca-….pem",
   "subscription": "…", "resource_group": "MC_karp_karp_westus2", "location": "westus2",
   "subnet_id": "/subscriptions/…/virtualNetworks/aks-vnet/subnets/aks-subnet"}

A faults file is a JSON or YAML list of rules (or {"seed": N, "rules": [...]}), e.g.
  - {op: create_vm, sku: Standard_D16ls_v5, kind: sku_not_available}
  - {op: create_vm, zone: "2", kind: zonal_allocation_failed, count: 1}
  - {op: "*", kind: throttle, rate: 0.05, retry_after: 1}
See docs/azure.md for every field.
"""


def _pairs(values: list[str], flag: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{flag} {value!r}: expected NAME=COUNT, e.g. {flag} cores=20")
        try:
            out[name.strip()] = int(number)
        except ValueError as e:
            raise ValueError(f"{flag} {value!r}: {number!r} is not a whole number") from e
        if out[name.strip()] < 0:
            raise ValueError(f"{flag} {value!r}: the count must not be negative")
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karp-sim arm",
        description="Serve a local Azure Resource Manager (compute, network, quota) over HTTPS on 127.0.0.1.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (default 0: any free port)")
    parser.add_argument("--location", default="westus2", help="the region served (default westus2); its SKU catalog must be bundled")
    parser.add_argument("--quota", action="append", default=[], metavar="NAME=LIMIT",
                        help="a vCPU limit: cores, lowPriorityCores or a family such as standardDLSv5Family (repeatable)")
    parser.add_argument("--usage", action="append", default=[], metavar="NAME=COUNT",
                        help="vCPUs already in use outside the emulator's VMs (repeatable)")
    parser.add_argument("--faults", metavar="FILE", help="faults to inject (JSON or YAML list of rules)")
    parser.add_argument("--subscription", default=DEFAULT_SUBSCRIPTION, help="subscription id served")
    parser.add_argument("--resource-group", help="node resource group (default MC_karp_karp_<location>)")
    parser.add_argument("--subnet-prefix", default="10.224.0.0/16", help="the subnet's address prefix (default 10.224.0.0/16)")
    parser.add_argument("--vm-create-delay", type=float, default=0.0, metavar="SECONDS", help="time a VM create stays InProgress")
    parser.add_argument("--vm-delete-delay", type=float, default=0.0, metavar="SECONDS", help="time a VM delete stays InProgress")
    parser.add_argument("--nic-reservation", type=float, default=0.0, metavar="SECONDS",
                        help="hold a deleted VM's NIC for this long (Azure: 180; default 0: off)")
    parser.add_argument("--quota-request-delay", type=float, default=0.0, metavar="SECONDS",
                        help="time before a quota increase takes effect")
    parser.add_argument("--quota-ceiling", type=int, metavar="LIMIT", help="reject quota increases above this limit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        quotas = _pairs(args.quota, "--quota")
        usages = _pairs(args.usage, "--usage")
        faults = load_faults(args.faults) if args.faults else FaultPlan()
        try:
            ipaddress.ip_network(args.subnet_prefix)
        except ValueError as e:
            raise ValueError(f"--subnet-prefix {args.subnet_prefix!r}: not a network in CIDR form ({e})") from e
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port {args.port}: not a TCP port (0-65535)")
        delays = (args.vm_create_delay, args.vm_delete_delay, args.nic_reservation, args.quota_request_delay)
        if min(delays) < 0:
            raise ValueError("--vm-create-delay, --vm-delete-delay, --nic-reservation and --quota-request-delay must not be negative")
        emulator = ArmEmulator(
            args.location, quotas, usages, faults,
            subscription=args.subscription, resource_group=args.resource_group, subnet_prefix=args.subnet_prefix,
            timings=Timings(args.vm_create_delay, args.vm_delete_delay, 0.0, args.nic_reservation),
            quota_ceiling=args.quota_ceiling, quota_request_delay_s=args.quota_request_delay, port=args.port,
        )
        info = emulator.start()
    except ValueError as e:
        print(f"karp-sim arm: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"karp-sim arm: cannot listen on 127.0.0.1:{args.port} ({e.strerror or e})", file=sys.stderr)
        return 1
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    print(json.dumps(info.as_dict()), flush=True)
    try:
        stop.wait()
    finally:
        emulator.stop()
    return 0
