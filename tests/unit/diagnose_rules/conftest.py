"""Builders shared by the diagnose rules tests: Karpenter-shaped lines and hand-made frames."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from diagnose.schema import SCHEMA

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log"
RULES = ROOT / "fixtures" / "logs" / "rules"
T0 = datetime(2024, 9, 12, 8, 0, 0, tzinfo=UTC)
DASH = "-" * 80
QUOTA_TEXT = (
    "Operation could not be completed as it results in exceeding approved {name} quota. Additional details - "
    "Deployment Model: Resource Manager, Location: {region}, Current Limit: {limit}, Current Usage: {usage}, "
    "Additional Required: {required}, (Minimum) New Limit Required: {new}. Submit a request for Quota increase at "
    "https://aka.ms/ProdportalCRP by specifying parameters listed in the ‘Details’ section for deployment to succeed."
)


def stamp(seconds: float) -> str:
    moment = T0 + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def v1(level: str, seconds: float, message: str, controller: str, **fields: Any) -> str:
    record = {"level": level, "time": stamp(seconds), "logger": "controller", "message": message, "commit": "4a1c0b2",
              "controller": controller}
    record.update(fields)
    return json.dumps(record)


def claim_of(claim: str, pool: str) -> dict[str, Any]:
    return {"controllerKind": "NodeClaim", "NodeClaim": {"name": claim}, "NodePool": {"name": pool}, "name": claim}


def found(seconds: float, pods: list[str], others: int = 0) -> str:
    named = ", ".join(pods) + (f" and {others} other(s)" if others else "")
    return v1("INFO", seconds, "found provisionable pod(s)", "provisioner", Pods=named, duration="9ms")


def created(seconds: float, claim: str, pool: str = "general-purpose", cpu: str = "3250m", pods: int = 8) -> str:
    return v1("INFO", seconds, "created nodeclaim", "provisioner", NodePool={"name": pool}, NodeClaim={"name": claim},
              requests={"cpu": cpu, "memory": "1262280Ki", "pods": str(pods)},
              **{"instance-types": "Standard_D4s_v5, Standard_D8s_v5 and 30 other(s)"})


def selected(seconds: float, claim: str, sku: str, pool: str = "general-purpose") -> str:
    return v1("INFO", seconds, "selected instance type", "nodeclaim.lifecycle", instanceType=sku, **claim_of(claim, pool))


def launched(seconds: float, claim: str, pool: str = "general-purpose") -> str:
    return v1("INFO", seconds, "launched nodeclaim", "nodeclaim.lifecycle", **claim_of(claim, pool),
              **{"instance-type": "Standard_D4s_v5", "zone": "eastus-1", "capacity-type": "on-demand"})


def failed(seconds: float, claim: str, code: str, message: str, pool: str = "general-purpose", status: str = "409: 409 Conflict") -> str:
    body = json.dumps({"error": {"code": code, "message": message}}, indent=2)
    url = f"https://management.azure.com/subscriptions/xxxxx/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-{claim}"
    error = (f"creating instance, creating virtual machine \"aks-{claim}\" failed: PUT {url}\n{DASH}\nRESPONSE {status}\n"
             f"ERROR CODE: {code}\n{DASH}\n{body}\n{DASH}\n")
    return v1("ERROR", seconds, "failed launching nodeclaim", "nodeclaim.lifecycle", error=error, **claim_of(claim, pool))


def quota_failed(seconds: float, claim: str, *, name: str = "Total Regional Cores", region: str = "eastus",
                 limit: int = 20, usage: int = 14, required: int = 8, pool: str = "general-purpose") -> str:
    text = QUOTA_TEXT.format(name=name, region=region, limit=limit, usage=usage, required=required, new=usage + required)
    return failed(seconds, claim, "OperationNotAllowed", text, pool)


def pods_of(workload: str, count: int, namespace: str = "default") -> list[str]:
    suffixes = ["2xkqp", "4hrzt", "9fwnv", "bx7lc", "k2m5s", "qz8gd", "t4wvp", "zr6hn", "c5d6f", "g7h8j"]
    return [f"{namespace}/{workload}-7c9d5f8b6d-{s}" for s in suffixes[:count]]


@pytest.fixture
def lines() -> Callable[..., Any]:
    """Parse Karpenter-shaped lines through the real ingest."""
    from diagnose.ingest import parse_lines

    def parse(items: list[str], file: str = "test.log") -> Any:
        return parse_lines(items, file)

    return parse


@pytest.fixture
def frame_of() -> Callable[[list[dict[str, Any]]], pl.DataFrame]:
    """A frame of the normalised schema from partial rows (missing columns are null)."""

    def build(rows: list[dict[str, Any]]) -> pl.DataFrame:
        full = []
        for index, row in enumerate(rows, 1):
            base: dict[str, Any] = {k: None for k in SCHEMA}
            base.update(file="frame.log", line=index, source="log", parse_status="parsed", shape="v1")
            base.update(row)
            full.append(base)
        return pl.DataFrame(full, schema=SCHEMA)

    return build


@pytest.fixture
def log() -> Any:
    """The line builders above, as one namespace: ``log.found(...)``, ``log.quota_failed(...)`` …"""
    from types import SimpleNamespace

    return SimpleNamespace(
        v1=v1, found=found, created=created, selected=selected, launched=launched, failed=failed,
        quota_failed=quota_failed, pods_of=pods_of, claim_of=claim_of, stamp=stamp, T0=T0, SEED=SEED, RULES=RULES,
    )
