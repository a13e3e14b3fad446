"""Faults the emulator injects on request: a list of rules matched against each call.

A rule names an operation (``create_vm``, ``create_nic``, ``get_usages``, ``list_skus``,
``delete_vm``, … or ``*``), optionally a VM size and a zone, and a ``kind``:

- ``throttle``: 429 with ``Retry-After`` and ``x-ms-ratelimit-remaining-*`` headers;
- ``server_error``: 500 (or ``status: 503``);
- ``slow``: the answer is held back ``delay_s`` seconds, then sent normally;
- ``drop``: the connection is closed without an answer;
- ``allocation_failed`` / ``zonal_allocation_failed`` / ``overconstrained``: the VM create is
  accepted, then its long-running operation fails with that code;
- ``sku_not_available``: the VM create is refused at once (409 SkuNotAvailable);
- ``public_ip_limit``: the VM create is refused at once (400 PublicIPCountLimitReached);
- ``legacy_quota``: the VM create is refused at once with the older quota wording (409
  OperationNotAllowed, "Operation results in exceeding quota limits of Core. Maximum allowed: …",
  with the regional figures the emulator holds).

A rule fires every time it matches, or with probability ``rate`` (drawn from a generator
seeded with the plan's ``seed``), and at most ``count`` times. The first rule that matches
and fires wins. Files are JSON or YAML: a list of rules, or ``{"seed": 7, "rules": [...]}``.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ASYNC_KINDS", "KINDS", "OPERATIONS", "VM_CREATE_KINDS", "FaultPlan", "FaultRule", "load_faults", "plan_from_data"]

KINDS = (
    "throttle",
    "server_error",
    "slow",
    "drop",
    "allocation_failed",
    "zonal_allocation_failed",
    "overconstrained",
    "sku_not_available",
    "public_ip_limit",
    "legacy_quota",
)
VM_CREATE_KINDS = ("sku_not_available", "public_ip_limit", "legacy_quota")  # refusals only a VM create can get
ASYNC_KINDS = ("allocation_failed", "zonal_allocation_failed", "overconstrained")
OPERATIONS = (
    "create_vm",
    "get_vm",
    "list_vms",
    "delete_vm",
    "create_nic",
    "get_nic",
    "list_nics",
    "delete_nic",
    "get_usages",
    "list_skus",
    "get_operation",
    "get_quota",
    "request_quota",
    "get_quota_request",
    "*",
)
_FIELDS = {"op", "sku", "zone", "kind", "rate", "count", "retry_after", "delay_s", "status"}


@dataclass(frozen=True, slots=True)
class FaultRule:
    kind: str
    op: str = "*"
    sku: str = ""
    zone: str = ""
    rate: float = 1.0
    count: int | None = None  # None: unlimited
    retry_after: int = 1
    delay_s: float = 0.0
    status: int = 500

    def matches(self, op: str, sku: str, zone: str) -> bool:
        if self.op not in ("*", op):
            return False
        if self.sku and self.sku.lower() != sku.lower():
            return False
        return not (self.zone and self.zone != zone)

    @staticmethod
    def from_dict(raw: dict[str, Any], where: str = "rule") -> FaultRule:
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: expected a mapping, got {type(raw).__name__}")
        unknown = set(raw) - _FIELDS
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_FIELDS))})")
        kind = str(raw.get("kind", ""))
        if kind not in KINDS:
            raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
        op = str(raw.get("op", "*"))
        if op not in OPERATIONS:
            raise ValueError(f"{where}: op {op!r} is not one of {', '.join(OPERATIONS)}")
        try:
            rate = float(raw.get("rate", 1.0))
            count = None if raw.get("count") is None else int(raw["count"])
            retry_after = int(raw.get("retry_after", 1))
            delay_s = float(raw.get("delay_s", 0.0))
            status = int(raw.get("status", 500))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from e
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{where}: rate {rate} is not between 0 and 1")
        if count is not None and count < 0:
            raise ValueError(f"{where}: count {count} is negative")
        if retry_after < 0 or delay_s < 0:
            raise ValueError(f"{where}: retry_after and delay_s must not be negative")
        if status not in (500, 502, 503, 504):
            raise ValueError(f"{where}: status {status} is not one of 500, 502, 503, 504")
        zone = "" if raw.get("zone") is None else str(raw["zone"])
        return FaultRule(kind, op, str(raw.get("sku") or ""), zone, rate, count, retry_after, delay_s, status)


class FaultPlan:
    """The rules in force, with their remaining counts and a seeded generator (thread-safe)."""

    def __init__(self, rules: list[FaultRule] | None = None, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = list(rules or [])
        self._remaining: list[int | None] = [r.count for r in self._rules]
        self._fired: list[int] = [0 for _ in self._rules]
        self._random = random.Random(seed)

    def add(self, rule: FaultRule) -> None:
        with self._lock:
            self._rules.append(rule)
            self._remaining.append(rule.count)
            self._fired.append(0)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
            self._remaining.clear()
            self._fired.clear()

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def fired(self) -> list[int]:
        """How many times each rule has fired, in rule order."""
        with self._lock:
            return list(self._fired)

    def draw(self, op: str, sku: str = "", zone: str = "", kinds: tuple[str, ...] = KINDS) -> FaultRule | None:
        """The rule that fires for this call, if any (counts it)."""
        with self._lock:
            for index, rule in enumerate(self._rules):
                if rule.kind not in kinds or not rule.matches(op, sku, zone):
                    continue
                remaining = self._remaining[index]
                if remaining is not None and remaining <= 0:
                    continue
                if rule.rate < 1.0 and self._random.random() >= rule.rate:
                    continue
                if remaining is not None:
                    self._remaining[index] = remaining - 1
                self._fired[index] += 1
                return rule
        return None


def load_faults(path: str | Path) -> FaultPlan:
    """Read a faults file (JSON or YAML); raises ValueError naming the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"faults file {path}: cannot read it ({e.strerror or e})") from e
    try:
        raw: Any = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise ValueError(f"faults file {path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'} ({e})") from e
    return plan_from_data(raw, str(path))


def plan_from_data(raw: Any, where: str = "faults") -> FaultPlan:
    seed = 0
    if isinstance(raw, dict):
        seed = int(raw.get("seed", 0))
        raw = raw.get("rules", [])
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ValueError(f"{where}: expected a list of rules or a mapping with 'rules'")
    rules = [FaultRule.from_dict(item, f"{where}: rule {i + 1}") for i, item in enumerate(raw)]
    return FaultPlan(rules, seed)
