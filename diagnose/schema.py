"""The normalised table every ingested line and event becomes (one polars frame).

Ingest produces it; correlate and the rules read it; karp-tui replays it. A column that a
line does not carry is null. Event kinds use the keys of ``provisioner.model.logvocab``
(``nodeclaim.launch_failed`` …) whatever generation of Karpenter wrote the line, plus
``k8s.<Reason>`` for Kubernetes Events (``k8s.FailedScheduling``, ``k8s.Nominated`` …).
"""

from __future__ import annotations

import polars as pl

# parse_status values: every input line ends as exactly one of these.
PARSED = "parsed"
REPAIRED = "repaired"
UNPARSED = "unparsed"

SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "file": pl.Utf8,  # the input's display name ("-" for stdin)
    "line": pl.Int64,  # 1-based first line of the record in that input
    "source": pl.Utf8,  # "log" | "event"
    "parse_status": pl.Utf8,  # parsed | repaired | unparsed
    "shape": pl.Utf8,  # alpha | v1 | fallback | zap-console | karp | k8s-event | text
    "time": pl.Datetime("us", "UTC"),
    "level": pl.Utf8,  # upper-case: DEBUG INFO WARN ERROR
    "component": pl.Utf8,  # provisioner | nodeclaim.lifecycle | disruption | … | default-scheduler | karpenter
    "message": pl.Utf8,
    "event": pl.Utf8,  # stable event kind (see module doc); null when not recognised
    "pods": pl.List(pl.Utf8),  # "namespace/name" of every pod named on the line
    "pod_count": pl.Int64,  # pods named plus those behind "and N other(s)"
    "nodepool": pl.Utf8,
    "nodeclaim": pl.Utf8,
    "node": pl.Utf8,
    "instance_type": pl.Utf8,
    "instance_types_count": pl.Int64,  # "X, Y and 73 other(s)" -> 75
    "zone": pl.Utf8,
    "capacity_type": pl.Utf8,
    "error_code": pl.Utf8,
    "error_message": pl.Utf8,  # the cloud error's message (or the whole error text)
    "category": pl.Utf8,  # diagnosis category when the line carries an error
    "quota_scope": pl.Utf8,  # regional | family | spot
    "quota_name": pl.Utf8,
    "quota_limit": pl.Int64,
    "quota_usage": pl.Int64,
    "quota_required": pl.Int64,
    "quota_new_limit": pl.Int64,
    "region": pl.Utf8,
    "requests_cpu_m": pl.Int64,
    "requests_memory": pl.Int64,
    "requests_pods": pl.Int64,
    "reason": pl.Utf8,  # Kubernetes Event reason
    "object_kind": pl.Utf8,  # Kubernetes Event involvedObject.kind
    "object_name": pl.Utf8,  # namespace/name for pods, name otherwise
    "raw": pl.Utf8,  # the original text (kept for unparsed, repaired and error lines)
}

COLUMNS = list(SCHEMA)


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMA)
