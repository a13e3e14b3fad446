"""Azure had no room for the request: a size not offered, no capacity, or over-constrained.

* ``sku-not-available``: the size is restricted for the subscription in the region or zone
  (``SkuNotAvailable``); Karpenter skips it for a while and tries others.
* ``allocation-failed`` / ``zonal-allocation-failed``: Azure had no capacity for the size in
  the region or zone at that moment.
* ``overconstrained-allocation``: the combination (size, zone, accelerated networking …)
  cannot be placed although each part alone could.
* ``insufficient-capacity``: Karpenter said so ("all requested instance types were
  unavailable during launch") and the input shows no cloud error that explains why.
"""

from __future__ import annotations

from diagnose import fixes
from diagnose.correlate import Occurrence
from diagnose.findings import Finding, Fix
from diagnose.rules.base import Context, Group, Rule, claims_phrase, lead, sku_phrase
from provisioner.model.errors import SkuNotAvailable

__all__ = ["RULES"]


def _region_key(occurrence: Occurrence) -> tuple[str, ...]:
    return (occurrence.category, occurrence.region.lower())


def _where(finding: Finding) -> str:
    where = f" in {finding.region}" if finding.region else ""
    if finding.zones:
        where += f" (zone {', '.join(finding.zones)})"
    return where


def _skus(group: Group) -> list[str]:
    names: dict[str, None] = {}
    for occurrence in group.occurrences:
        cloud = occurrence.cloud
        sku = cloud.sku if isinstance(cloud, SkuNotAvailable) and cloud.sku else occurrence.instance_type
        if sku:
            names.setdefault(sku, None)
    return list(names)


def _exclude_sizes(finding: Finding, sizes: list[str], why: str) -> Fix:
    requirement: dict[str, object] = {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": sizes}
    return Fix(
        "nodepool-change",
        f"Keep NodePool {finding.nodepool or '<nodepool>'} away from {', '.join(sizes)} ({why}).",
        fixes.nodepool_patch(finding.nodepool, [requirement]),
    )


def _sku_not_available(finding: Finding, group: Group, context: Context) -> None:
    skus = _skus(group) or finding.instance_types
    if not finding.region:
        finding.region = next((o.cloud.region for o in group.occurrences if isinstance(o.cloud, SkuNotAvailable) and o.cloud.region), "")
    finding.instance_types = skus
    finding.summary = (
        f"{lead(finding)} because {', '.join(skus) or 'the chosen size'} is not available to this subscription"
        f"{_where(finding)} (SkuNotAvailable); Karpenter skips it for a while (spot 1 h, on-demand 23 h)."
    )
    region = finding.region or "<region>"
    check = " ; ".join(f"az vm list-skus -l {region} --size {s} --all -o table" for s in skus[:3])
    if skus:
        fix = _exclude_sizes(finding, skus, "not offered to this subscription there")
        finding.fixes.append(Fix(fix.kind, fix.summary, fix.command, check))
    finding.fixes.append(
        Fix(
            "investigate",
            "If you need this size there, ask Azure support to lift the restriction (a region or SKU access request).",
            "",
            check,
        )
    )


def _allocation(finding: Finding, group: Group, context: Context) -> None:
    zonal = finding.category == "zonal-allocation-failed"
    scope = "zone" if zonal else "region"
    finding.summary = (
        f"{lead(finding)} because Azure had no capacity for {sku_phrase(finding)}{_where(finding)} when "
        f"{claims_phrase(finding)} asked ({finding.error_code or 'AllocationFailed'}); Karpenter avoids that "
        f"{scope} for this size for an hour."
    )
    if zonal:
        finding.fixes.append(
            Fix(
                "nodepool-change",
                "Allow more zones in the NodePool (or drop its zone requirement) so the size can be placed elsewhere.",
                f"kubectl edit nodepool {finding.nodepool or '<nodepool>'}   # in spec.template.spec.requirements:\n"
                "- key: topology.kubernetes.io/zone\n  operator: In\n  values: [\"<region>-1\", \"<region>-2\", \"<region>-3\"]",
            )
        )
    finding.fixes.append(
        Fix(
            "nodepool-change",
            "Allow more sizes (other series or families) in the NodePool so Karpenter has somewhere else to go; "
            "capacity shortages are per size and place.",
            f"kubectl get nodepool {finding.nodepool or '<nodepool>'} -o yaml",
        )
    )
    finding.fixes.append(Fix("retry", "Capacity often returns within the hour; Karpenter retries by itself."))


def _overconstrained(finding: Finding, group: Group, context: Context) -> None:
    finding.summary = (
        f"{lead(finding)} because Azure could not place {sku_phrase(finding)}{_where(finding)} with all the "
        "constraints of the request together (size, zone, accelerated networking …): "
        f"{finding.error_code or 'OverconstrainedAllocationRequest'}."
    )
    finding.fixes.append(
        Fix(
            "nodepool-change",
            "Relax one constraint: allow more zones or sizes in the NodePool, or sizes without accelerated networking.",
            f"kubectl get nodepool {finding.nodepool or '<nodepool>'} -o yaml",
        )
    )


def _insufficient(finding: Finding, group: Group, context: Context) -> None:
    what = (
        f"Karpenter found no instance type it could launch for {claims_phrase(finding)} (\"insufficient capacity\"); "
        "the input does not show the cloud error behind it."
    )
    finding.summary = f"{lead(finding)} because {what}" if finding.pod_count else what
    claim = finding.nodeclaims[0] if finding.nodeclaims else "<nodeclaim>"
    finding.fixes.append(
        Fix(
            "investigate",
            "Find the underlying error: the controller logs each launch failure (set its log level to debug), "
            "and the NodeClaim's events and conditions name it; give both to karp-diagnose.",
            f"kubectl describe nodeclaim {claim}",
            "kubectl get events -A --field-selector involvedObject.kind=NodeClaim -o json > nodeclaim-events.json",
        )
    )


def _insufficient_key(occurrence: Occurrence) -> tuple[str, ...]:
    return (occurrence.category, occurrence.nodepool)


RULES = (
    Rule(("sku-not-available",), _region_key, _sku_not_available),
    Rule(("allocation-failed", "zonal-allocation-failed"), _region_key, _allocation),
    Rule(("overconstrained-allocation",), _region_key, _overconstrained),
    Rule(("insufficient-capacity",), _insufficient_key, _insufficient),
)
