"""The JSON form of a report: a stable, documented schema (docs/diagnose-report.schema.json).

Keys are never renamed; new keys may be added. Times are ISO 8601 in UTC with a ``Z``.
``schema_version`` changes only if a key ever had to change meaning.
"""

from __future__ import annotations

import json as _json
from datetime import UTC, datetime
from typing import Any

from diagnose.findings import (
    BLOCKING,
    INFO,
    WARNING,
    Alternative,
    Evidence,
    Finding,
    Fix,
    InputStats,
    PodRequests,
    QuotaFigures,
    Report,
)

__all__ = ["SCHEMA_VERSION", "dumps", "exit_code", "report_to_json"]

SCHEMA_VERSION = 1


def _time(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _evidence(ref: Evidence) -> dict[str, Any]:
    out: dict[str, Any] = {"file": ref.file, "line": ref.line}
    if ref.role:
        out["role"] = ref.role
    if ref.text:
        out["text"] = ref.text
    return out


def _input(stats: InputStats) -> dict[str, Any]:
    return {
        "lines": stats.lines,
        "parsed": stats.parsed,
        "repaired": stats.repaired,
        "unparsed": stats.unparsed,
        "blank": stats.blank,
        "files": list(stats.files),
        "events": stats.events,
        "unparsed_refs": [_evidence(r) for r in stats.unparsed_refs],
        "repaired_refs": [_evidence(r) for r in stats.repaired_refs],
    }


def _quota(quota: QuotaFigures | None) -> dict[str, Any] | None:
    if quota is None:
        return None
    live = None
    if quota.live is not None:
        live = {
            "limit": quota.live.limit,
            "usage": quota.live.usage,
            "headroom": max(quota.live.limit - quota.live.usage, 0),
            "read_at": _time(quota.live.read_at),
        }
    return {
        "name": quota.name,
        "scope": quota.scope,
        "limit": quota.limit,
        "usage": quota.usage,
        "required": quota.required,
        "new_limit": quota.new_limit,
        "headroom": quota.headroom,
        "source": quota.source,
        "read_at": _time(quota.read_at),
        "live": live,
    }


def _fix(fix: Fix) -> dict[str, Any]:
    return {"kind": fix.kind, "summary": fix.summary, "command": fix.command, "check": fix.check}


def _per_pod(per_pod: PodRequests | None) -> dict[str, Any] | None:
    if per_pod is None:
        return None
    return {
        "cpu_m": per_pod.cpu_m,
        "memory": per_pod.memory,
        "overhead_cpu_m": per_pod.overhead_cpu_m,
        "overhead_memory": per_pod.overhead_memory,
        "overhead_pods": per_pod.overhead_pods,
        "derivation": per_pod.derivation,
    }


def _alternative(option: Alternative) -> dict[str, Any]:
    return {
        "instance_type": option.instance_type,
        "vcpus": option.vcpus,
        "nodes": option.nodes,
        "pods_per_node": option.pods_per_node,
        "pods": option.pods,
        "source": option.source,
        "price_per_hour": option.price_per_hour,
    }


def finding_to_json(finding: Finding) -> dict[str, Any]:
    return {
        "category": finding.category,
        "severity": finding.severity,
        "summary": finding.summary,
        "pods": list(finding.pods),
        "pod_count": finding.pod_count,
        "pending_pods": list(finding.pending_pods),
        "workloads": list(finding.workloads),
        "nodeclaims": list(finding.nodeclaims),
        "nodepool": finding.nodepool,
        "instance_types": list(finding.instance_types),
        "instance_type_vcpus": dict(finding.instance_type_vcpus),
        "region": finding.region,
        "zones": list(finding.zones),
        "capacity_types": list(finding.capacity_types),
        "resources": list(finding.resources),
        "quota": _quota(finding.quota),
        "first_seen": _time(finding.first_seen),
        "last_seen": _time(finding.last_seen),
        "occurrences": finding.occurrences,
        "resolved": finding.resolved,
        "resolved_at": _time(finding.resolved_at),
        "evidence": [_evidence(r) for r in finding.evidence],
        "evidence_total": max(finding.evidence_total, len(finding.evidence)),
        "fixes": [_fix(f) for f in finding.fixes],
        "per_pod": _per_pod(finding.per_pod),
        "alternatives": [_alternative(a) for a in finding.alternatives],
        "details": list(finding.details),
        "error_code": finding.error_code,
        "error_message": finding.error_message,
    }


def exit_code(report: Report) -> int:
    return 1 if report.blocking else 0


def report_to_json(report: Report) -> dict[str, Any]:
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in (BLOCKING, WARNING, INFO)}
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _time(report.generated_at),
        "input": _input(report.input),
        "quota_source": report.quota_source,
        "filters": {k: list(v) for k, v in report.filters.items()},
        "counts": {"findings": len(report.findings), **counts, "hidden": report.hidden},
        "exit_code": exit_code(report),
        "notes": list(report.notes),
        "findings": [finding_to_json(f) for f in report.findings],
    }


def dumps(report: Report) -> str:
    return _json.dumps(report_to_json(report), indent=2, ensure_ascii=False) + "\n"
