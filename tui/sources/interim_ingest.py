"""A stop-gap reader of Karpenter's 2023 alpha log lines into the normalised table.

Used only while ``diagnose.ingest`` is not importable; it knows just the founding log's
line shapes. ``load`` prefers ``diagnose.ingest.load`` whenever that exists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from diagnose import schema
from provisioner.model.errors import QuotaExceeded, classify

_MESSAGES = (
    ("found provisionable pod(s)", "pods.found"),
    ("computed new nodeclaim(s)", "plan.computed"),
    ("created nodeclaim", "nodeclaim.created"),
    ("Selected instance type", "nodeclaim.instance_selected"),
    ("Resolved image", "nodeclaim.image_resolved"),
    ("Creating network interface", "nic.creating"),
    ("Successfully created network interface", "nic.created"),
    ("Creating virtual machine", "vm.creating"),
)
_FIELD = re.compile(r'"(level|time|logger|nodeclaim|nodepool)":"([^"]*)"')
_MESSAGE = re.compile(r'"message":"(.*)","commit"', re.DOTALL)
_CODE = re.compile(r"ERROR CODE: (\w+)")
_AZ_MESSAGE = re.compile(r'"message": "(.*?)"\\n')
_OTHERS = re.compile(r"and (\d+) other\(s\)")
_TYPE = re.compile(r"(Standard_\w+)")


def _parse(text: str) -> tuple[dict[str, Any], str]:
    try:
        return json.loads(text), schema.PARSED
    except ValueError:
        found = dict(_FIELD.findall(text))
        match = _MESSAGE.search(text)
        found["message"] = match.group(1) if match else text
        return found, schema.REPAIRED


def _row(file: str, number: int, text: str) -> dict[str, Any]:
    data, status = _parse(text)
    row: dict[str, Any] = dict.fromkeys(schema.COLUMNS)
    message = str(data.get("message", ""))
    row.update(
        file=file, line=number, source="log", parse_status=status, shape="alpha",
        time=datetime.fromisoformat(str(data["time"]).replace("Z", "+00:00")) if "time" in data else None,
        level=str(data.get("level", "INFO")).upper(),
        component=str(data.get("logger", "")).removeprefix("controller."),
        message=message, nodeclaim=data.get("nodeclaim"), nodepool=data.get("nodepool"),
    )
    for prefix, event in _MESSAGES:
        if message.startswith(prefix):
            row["event"] = event
    pods = data.get("pods")
    if isinstance(pods, str):
        named = [p.strip() for p in _OTHERS.sub("", pods).replace(" and ", ",").split(",") if p.strip()]
        others = _OTHERS.search(pods)
        row["pods"] = named
        row["pod_count"] = len(named) + (int(others.group(1)) if others else 0)
    if row["event"] in ("nodeclaim.instance_selected", "vm.creating"):
        match = _TYPE.search(message)
        row["instance_type"] = match.group(1) if match else None
    requests = data.get("requests")
    if isinstance(requests, dict):
        row["requests_cpu_m"] = int(str(requests.get("cpu", "0")).removesuffix("m"))
        row["requests_pods"] = int(requests.get("pods", 0))
    if row["level"] == "ERROR":
        row["raw"] = text
        code = _CODE.search(text)
        az = _AZ_MESSAGE.search(text)
        row["event"] = "nodeclaim.launch_failed"
        row["error_code"] = code.group(1) if code else None
        row["error_message"] = az.group(1) if az else message
        error = classify(row["error_code"] or "", row["error_message"])
        row["category"] = error.category
        if isinstance(error, QuotaExceeded):
            row.update(
                quota_scope=error.scope, quota_name=error.quota, quota_limit=error.limit,
                quota_usage=error.usage, quota_required=error.required,
                quota_new_limit=error.new_limit, region=error.region,
            )
    return row


def load(paths: Sequence[str]) -> pl.DataFrame:
    rows = [
        _row(path, number, text)
        for path in paths
        for number, text in enumerate(Path(path).read_text().splitlines(), start=1)
        if text.strip()
    ]
    return pl.DataFrame(rows, schema=schema.SCHEMA)
