"""Fixes: the exact command that unblocks a cause, and the NodePool change that fits today.

Every fix is something a person can run or paste: an ``az`` command (quota requests go
through the ``quota`` CLI extension: ``az extension add --name quota``), a ``kubectl patch``
of the NodePool, or a check that shows the figures. When the subscription id is not in
the input, commands carry the placeholder ``<subscription-id>``.
"""

from __future__ import annotations

import json

from diagnose.findings import Alternative, Fix, PodRequests, QuotaFigures
from provisioner.model.errors import QuotaScope

__all__ = [
    "SUBSCRIPTION_PLACEHOLDER",
    "check_usage",
    "nodepool_patch",
    "nodepool_sizes",
    "quota_request",
]

SUBSCRIPTION_PLACEHOLDER = "<subscription-id>"
_RESOURCE_TYPE = {QuotaScope.REGIONAL: "dedicated", QuotaScope.FAMILY: "dedicated", QuotaScope.SPOT: "lowPriority"}
_QUOTA_LABEL = {
    QuotaScope.REGIONAL: "regional vCPU quota (Total Regional vCPUs, 'cores')",
    QuotaScope.SPOT: "spot vCPU quota (lowPriorityCores)",
}


def quota_label(quota: QuotaFigures) -> str:
    return _QUOTA_LABEL.get(quota.scope, f"{quota.name} vCPU quota")


def check_usage(region: str) -> str:
    return f"az vm list-usage -l {region or '<region>'} -o table"


def quota_request(quota: QuotaFigures, region: str, subscription: str = "") -> Fix:
    """``az quota update`` raising ``quota`` to its minimum new limit (from current figures when read)."""
    usage, limit, new_limit = quota.usage, quota.limit, quota.new_limit
    if quota.live is not None:
        usage, limit = quota.live.usage, quota.live.limit
        new_limit = usage + quota.required
        if limit >= new_limit:
            return Fix(
                "retry",
                f"The {quota_label(quota)} now allows it (limit {limit}, usage {usage}, {quota.required} required): "
                "no request needed; the next launch attempt should succeed.",
                "",
                check_usage(region),
            )
    scope = (
        f"/subscriptions/{subscription or SUBSCRIPTION_PLACEHOLDER}/providers/Microsoft.Compute/locations/"
        f"{region or '<region>'}"
    )
    command = (
        f"az quota update --resource-name {quota.name} --scope {scope} "
        f"--limit-object value={new_limit} --resource-type {_RESOURCE_TYPE.get(quota.scope, 'dedicated')}"
    )
    summary = (
        f"Request a {quota_label(quota)} increase in {region or 'the region'} from "
        f"{limit} to at least {new_limit} (usage {usage} + "
        f"{quota.required} required); needs the Azure CLI 'quota' extension, or file the same figures as a quota "
        "request in the portal."
    )
    return Fix("quota-request", summary, command, check_usage(region))


def nodepool_patch(nodepool: str, requirements: list[dict[str, object]]) -> str:
    """``kubectl patch`` adding requirements to a NodePool's template."""
    ops = [{"op": "add", "path": "/spec/template/spec/requirements/-", "value": r} for r in requirements]
    return f"kubectl patch nodepool {nodepool or '<nodepool>'} --type json -p '{json.dumps(ops, separators=(',', ':'))}'"


def mix_phrase(mix: list[tuple[Alternative, int]]) -> str:
    ordered = sorted(mix, key=lambda pair: (-pair[0].vcpus, pair[0].instance_type))
    return " + ".join(f"{count} × {option.instance_type}" for option, count in ordered)


def nodepool_sizes(
    nodepool: str,
    headroom: int,
    family_letter: str,
    options: list[Alternative],
    mix: list[tuple[Alternative, int]],
    pending: int,
    per_pod: PodRequests | None,
    whose: str = "",
) -> Fix:
    """Restrict the NodePool to sizes within today's headroom and say what that places now."""
    requirements: list[dict[str, object]] = [
        {"key": "karpenter.azure.com/sku-cpu", "operator": "Lt", "values": [str(headroom + 1)]}
    ]
    placed = sum(option.pods_per_node * count for option, count in mix)
    placed = min(placed, pending)
    used = sum(option.vcpus * count for option, count in mix)
    family = f"{family_letter}-family " if family_letter else ""
    if mix:
        summary = (
            f"Fit today's headroom of {headroom} vCPUs: let NodePool {nodepool or '<nodepool>'} use only "
            f"{family}sizes with at most {headroom} vCPUs; {mix_phrase(mix)} ({used} vCPUs) would hold "
            f"{placed} of the {pending} pending pods{whose} now"
        )
        left = pending - placed
        summary += f", {left} stay Pending until the quota is raised." if left > 0 else "."
    else:
        summary = f"No {family}size with at most {headroom} vCPUs holds one of these pods: only the quota request helps."
    if per_pod is not None and mix:
        summary += f" Per-pod figures: {per_pod.derivation}."
    return Fix("nodepool-change", summary, nodepool_patch(nodepool, requirements) if mix else "")
