"""Seeded generator of realistic, mixed-shape Karpenter controller logs for benchmarks.

The output interleaves the log shapes karp-diagnose reads: Karpenter v1 JSON (most of the
file, as in a current cluster), 2023-2024 alpha JSON, knative "fallback" lines, this
project's own records, zap console lines, ``kubectl logs --timestamps`` / ``--prefix``
prefixed lines, the odd pretty-printed record, and about 0.1 % malformed lines (truncated
JSON, Go stack traces, klog text, binary garbage). A few incidents are woven in: bursts of
regional and family vCPU quota refusals (Go SDK wrapped 409s), allocation failures and
unschedulable pods. The same seed and size give the same bytes.

Usage::

    python bench/loggen.py --size-mb 100 --seed 7 --out bench/data/karpenter-100mb.log
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

DASHES = "-" * 80
SKUS = ["Standard_D2s_v5", "Standard_D4s_v5", "Standard_D8s_v5", "Standard_D16ls_v5", "Standard_D4as_v5",
        "Standard_D8as_v5", "Standard_E4s_v5", "Standard_F8s_v2", "Standard_D16_v3", "Standard_D32s_v5"]
POOLS = ["general-purpose", "batch", "gpu-nc", "system-surge"]
ZONES = ["westus2-1", "westus2-2", "westus2-3"]
ALNUM = "bcdfghjklmnpqrstvwxz2456789"


def _name(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(n))


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _wrapped_409(vm: str, body_code: str, body_message: str) -> str:
    url = ("https://management.azure.com/subscriptions/xxxxx/resourceGroups/MC_rg_karpenter_westus2/"
           f"providers/Microsoft.Compute/virtualMachines/{vm}")
    return (f"PUT {url}\n{DASHES}\nRESPONSE 409: 409 Conflict\nERROR CODE: {body_code}\n{DASHES}\n"
            f'{{\n  "error": {{\n    "code": "{body_code}",\n    "message": "{_quote(body_message)}"\n  }}\n}}\n{DASHES}\n')


REGIONAL = ("Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
            "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
            "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for "
            "Quota increase at xxxxx by specifying parameters listed in the ‘Details’ section for deployment to "
            "succeed. Please read more about quota limits at "
            "https://docs.microsoft.com/en-us/azure/azure-supportability/regional-quota-requests")
FAMILY = ("Operation could not be completed as it results in exceeding approved standardDASv5Family Cores quota. "
          "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 100, "
          "Current Usage: 96, Additional Required: 8, (Minimum) New Limit Required: 104. Submit a request for "
          "Quota increase at xxxxx by specifying parameters listed in the ‘Details’ section for deployment to succeed.")
ALLOC = ("Allocation failed. We do not have sufficient capacity for the requested VM size in this region. Read more "
         "about improving likelihood of allocation success at http://aka.ms/allocation-guidance")


class Writer:
    """Accumulates lines for one generator run; the clock advances a few ms per line."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.t = datetime(2024, 8, 4, 21, 0, 0, tzinfo=UTC)
        self.commit = "490ef94"

    def tick(self) -> str:
        self.t += timedelta(microseconds=self.rng.randint(200, 9000))
        return _iso(self.t)

    def pods(self, n: int) -> tuple[str, int]:
        shown = [f"default/inflate-74ccd665f4-{_name(self.rng)}" for _ in range(min(n, 5))]
        text = ", ".join(shown) + (f" and {n - 5} other(s)" if n > 5 else "")
        return text, n

    def v1(self, level: str, message: str, controller: str, kind: str = "", name: str = "", extra: str = "") -> str:
        obj = f',"controllerGroup":"karpenter.sh","controllerKind":"{kind}","{kind}":{{"name":"{name}"}}' if kind else ""
        rid = f"{_name(self.rng, 8)}-{_name(self.rng, 4)}-{_name(self.rng, 4)}"
        return (f'{{"level":"{level}","time":"{self.tick()}","logger":"controller","message":"{message}",'
                f'"commit":"{self.commit}","controller":"{controller}"{obj},"namespace":"","name":"{name}",'
                f'"reconcileID":"{rid}"{extra}}}')

    def alpha(self, level: str, logger: str, message: str, extra: str = "") -> str:
        return (f'{{"level":"{level}","time":"{self.tick()}","logger":"controller.{logger}",'
                f'"message":"{_quote(message)}","commit":"389dc12-dirty"{extra}}}')

    def fallback(self, message: str) -> str:
        ts = self.t.timestamp()
        return (f'{{"level":"info","ts":{ts:.6f},"logger":"fallback","caller":"instance/instance.go:611",'
                f'"msg":"{message}"}}')

    # --- stories ---------------------------------------------------------------------------------

    def v1_provision(self, fail: str = "") -> list[str]:
        r = self.rng
        pool = r.choice(POOLS)
        claim = f"{pool}-{_name(r)}"
        n = r.randint(1, 40)
        pods, _ = self.pods(n)
        sku = r.choice(SKUS)
        zone = r.choice(ZONES)
        others = r.randint(0, 120)
        types = ", ".join(r.sample(SKUS, 5)) + (f" and {others} other(s)" if others else "")
        out = [
            self.v1("INFO", "found provisionable pod(s)", "provisioner",
                    extra=f',"Pods":"{pods}","duration":"{r.uniform(5, 90):.6f}ms"'),
            self.v1("INFO", "computed new nodeclaim(s) to fit pod(s)", "provisioner", extra=f',"nodeclaims":1,"pods":{n}'),
            self.v1("INFO", "created nodeclaim", "provisioner", "NodePool", pool,
                    f',"NodeClaim":{{"name":"{claim}"}},"requests":{{"cpu":"{n * 1000 + 250}m","memory":"'
                    f'{n * 262144 + 481280}Ki","pods":"{n + 5}"}},"instance-types":"{types}"'),
        ]
        if fail == "quota":
            err = _quote(f'creating virtual machine "aks-{claim}": ' + _wrapped_409(f"aks-{claim}", "OperationNotAllowed", r.choice([REGIONAL, FAMILY])))
            out.append(self.v1("ERROR", "failed launching nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim, f',"error":"{err}"'))
            out.append(self.v1("ERROR", "could not schedule pod", "provisioner", "Pod", f"inflate-74ccd665f4-{_name(r)}",
                               ',"error":"incompatible with nodepool \\"gpu-nc\\", daemonset overhead={\\"cpu\\":\\"250m\\"}, '
                               'no instance type satisfied resources {\\"cpu\\":\\"1250m\\",\\"pods\\":\\"6\\"}"'))
            return out
        if fail == "capacity":
            out.append(self.v1("ERROR", "failed launching nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim,
                               ',"error":"insufficient capacity, all requested instance types were unavailable during launch"'))
            return out
        if fail == "alloc":
            err = _quote("creating virtual machine: polling: " + ALLOC)
            out.append(self.v1("ERROR", "failed launching nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim,
                               f',"error":"(AllocationFailed) {err}"'))
            return out
        node = f"aks-{claim}"
        pid = f"azure:///subscriptions/xxxxx/resourceGroups/MC_rg/providers/Microsoft.Compute/virtualMachines/{node}"
        out += [
            self.v1("INFO", "launched nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim,
                    f',"provider-id":"{pid}","instance-type":"{sku}","zone":"{zone}","capacity-type":"on-demand",'
                    '"allocatable":{"cpu":"3860m","memory":"12858Mi","pods":"110"}'),
            self.v1("INFO", "registered nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim,
                    f',"provider-id":"{pid}","Node":{{"name":"{node}"}}'),
            self.v1("INFO", "initialized nodeclaim", "nodeclaim.lifecycle", "NodeClaim", claim,
                    f',"provider-id":"{pid}","Node":{{"name":"{node}"}},"allocatable":{{"cpu":"3860m","pods":"110"}}'),
        ]
        return out

    def v1_noise(self) -> list[str]:
        r = self.rng
        k = r.random()
        if k < 0.4:
            return [self.v1("DEBUG", "discovered subnets", "nodeclass.status", extra=',"subnets":["aks-subnet"]')]
        if k < 0.7:
            return [self.v1("INFO", "disrupting node(s)", "disruption",
                            extra=f',"command":"Empty/Delete, terminating 1 nodes (0 pods) aks-batch-{_name(r)}"')]
        if k < 0.85:
            claim = f"batch-{_name(r)}"
            return [self.v1("INFO", "deleted nodeclaim", "nodeclaim.termination", "NodeClaim", claim,
                            f',"Node":{{"name":"aks-{claim}"}}')]
        return [self.v1("DEBUG", "updated quota usages", "quota",
                        extra=',"familyQuotas":"standardDSv3Family: 78/500, standardDASv5Family: 96/100"')]

    def alpha_provision(self) -> list[str]:
        r = self.rng
        claim = f"general-purpose-{_name(r)}"
        pods, n = self.pods(r.randint(1, 12))
        sku = r.choice(SKUS)
        out = [
            self.alpha("INFO", "provisioner", "found provisionable pod(s)", f',"pods":"{pods}","duration":"15.19ms"'),
            self.alpha("INFO", "provisioner", "computed new nodeclaim(s) to fit pod(s)", f',"nodeclaims":1,"pods":{n}'),
            self.alpha("INFO", "provisioner", "created nodeclaim",
                       f',"nodepool":"general-purpose","nodeclaim":"{claim}","requests":{{"cpu":"{n * 1000 + 250}m",'
                       f'"memory":"{n * 262144 + 481280}Ki","pods":"{n + 5}"}},"instance-types":"Standard_D14_v2, '
                       'Standard_D16_v3, Standard_D16_v4, Standard_D16_v5, Standard_D16a_v4 and 73 other(s)"'),
            self.alpha("INFO", "nodeclaim.lifecycle", f"Selected instance type {sku}",
                       f',"nodeclaim":"{claim}","nodepool":"general-purpose"'),
            self.alpha("DEBUG", "nodeclaim.lifecycle", f"Creating network interface aks-{claim}",
                       f',"nodeclaim":"{claim}","nodepool":"general-purpose"'),
            self.alpha("DEBUG", "nodeclaim.lifecycle", f"Creating virtual machine aks-{claim} ({sku})",
                       f',"nodeclaim":"{claim}","nodepool":"general-purpose"'),
        ]
        if r.random() < 0.02:
            msg = f'Creating virtual machine "aks-{claim}" failed: ' + _wrapped_409(f"aks-{claim}", "OperationNotAllowed", REGIONAL)
            out.append(self.alpha("ERROR", "nodeclaim.lifecycle", msg, f',"nodeclaim":"{claim}","nodepool":"general-purpose"'))
        return out

    def almost_json(self) -> list[str]:
        """An error line whose inner quotes lost their escaping (as pasted from a web page)."""
        claim = f"general-purpose-{_name(self.rng)}"
        body = _wrapped_409(f"aks-{claim}", "OperationNotAllowed", REGIONAL).replace("\n", "\\n")
        return [f'{{"level":"ERROR","time":"{self.tick()}","logger":"controller.nodeclaim.lifecycle",'
                f'"message":"Creating virtual machine "aks-{claim}" failed: {body}","commit":"389dc12-dirty",'
                f'"nodeclaim":"{claim}","nodepool":"general-purpose"}}']

    def karp(self) -> list[str]:
        claim = f"general-purpose-{_name(self.rng)}"
        quota = ('"quota":{"scope":"regional","name":"cores","region":"westus2","limit":20,"usage":14,'
                 '"required":16,"newLimit":30}')
        return [self.v1("WARN", "quota blocks pod(s)", "provisioner", "NodePool", "general-purpose",
                        f',"event":"quota.blocked","NodeClaim":{{"name":"{claim}"}},"error.code":"OperationNotAllowed",{quota}')]

    def malformed(self) -> list[str]:
        r = self.rng
        k = r.random()
        if k < 0.3:
            line = self.v1("INFO", "found provisionable pod(s)", "provisioner", extra=',"Pods":"default/x"')
            return [line[: r.randint(10, len(line) - 2)]]
        if k < 0.55:
            return ["panic: runtime error: invalid memory address or nil pointer dereference", "",
                    "goroutine 1 [running]:",
                    "sigs.k8s.io/karpenter/pkg/controllers/provisioning.(*Provisioner).Schedule(0xc000a1e000)",
                    "\t/go/pkg/mod/sigs.k8s.io/karpenter@v1.0.0/pkg/controllers/provisioning/provisioner.go:331 +0x1a5"]
        if k < 0.8:
            return [f"I0804 21:{r.randint(10, 59)}:03.123456       1 leaderelection.go:250] attempting to acquire leader lease karpenter/karpenter-leader-election..."]
        # raw bytes 0x80-0xff (written through surrogateescape): invalid UTF-8
        return ["\x00\x07\x1b[31m" + "".join(chr(0xDC00 + r.randint(0x80, 0xFF)) for _ in range(12)) + " garbage"]

    def console(self) -> list[str]:
        pods, _ = self.pods(3)
        return [f'{self.tick()}\tDEBUG\tcontroller.provisioner\tfound provisionable pod(s)\t{{"commit": "5a7faa0", "pods": "{pods}"}}']

    def pretty(self) -> list[str]:
        claim = f"general-purpose-{_name(self.rng)}"
        return ["{", '  "level": "INFO",', f'  "time": "{self.tick()}",', '  "logger": "controller",',
                '  "message": "registered nodeclaim",', '  "controller": "nodeclaim.lifecycle",',
                '  "NodeClaim": {', f'    "name": "{claim}"', "  }", "}"]


def generate(out: Path, size_bytes: int, seed: int = 7) -> int:
    """Write about ``size_bytes`` of log to ``out``; returns the number of physical lines."""
    w = Writer(seed)
    r = w.rng
    total = 0
    lines_written = 0
    incident_every = max(size_bytes // 6, 1)  # a handful of incidents per file
    next_incident = incident_every // 2
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
        while total < size_bytes:
            batch: list[str] = []
            shape = r.random()
            prefix: Callable[[str], str] | None = None
            if shape < 0.08:
                prefix = lambda s: f"{w.t.strftime('%Y-%m-%dT%H:%M:%S.%f')}123Z {s}"  # noqa: E731
            elif shape < 0.10:
                prefix = lambda s: f"[pod/karpenter-7d9c8b6f5-x2k4q/controller] {s}"  # noqa: E731
            for _ in range(200):
                k = r.random()
                if total >= next_incident:
                    kind = r.choice(["quota", "quota", "capacity", "alloc"])
                    for _ in range(300):
                        batch += w.v1_provision(kind)
                    batch += w.almost_json()
                    next_incident += incident_every
                    break
                if shape < 0.7:
                    batch += w.v1_provision() if k < 0.35 else w.v1_noise()
                elif shape < 0.92:
                    batch += w.alpha_provision()
                elif shape < 0.97:
                    batch += w.fallback(f"Selected instance type {r.choice(SKUS)}").splitlines()
                    batch += w.v1_noise()
                elif shape < 0.99:
                    batch += w.console()
                else:
                    batch += w.karp()
                if r.random() < 0.0022:
                    batch += w.malformed()
                if r.random() < 0.00002:
                    batch += w.pretty()
            if prefix is not None:
                batch = [prefix(s) if s.startswith("{") else s for s in batch]
            text = "\n".join(batch) + "\n"
            fh.write(text)
            total += len(text.encode("utf-8", "surrogateescape"))
            lines_written += text.count("\n")
    return lines_written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1024.0, help="approximate size in MiB (default 1024)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--out", type=Path, required=True, help="output file")
    args = parser.parse_args(argv)
    n = generate(args.out, int(args.size_mb * 2**20), args.seed)
    print(f"wrote {args.out} ({n} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
