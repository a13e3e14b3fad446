"""The NodePool or its NodeClass stops Karpenter before any cloud call.

* ``no-compatible-instance-types``: the NodePool's requirements, combined with the pods'
  requests, selectors and tolerations, leave no instance type ("incompatible with nodepool",
  "no instance type satisfied resources", ``NoCompatibleInstanceTypes``).
* ``nodepool-limit``: the NodePool's ``spec.limits`` are reached, so no new node may be made.
* ``nodeclass-not-ready``: the AKSNodeClass the NodePool points to is not Ready (image,
  subnet or Kubernetes version not resolved), so the NodePool is not used.
"""

from __future__ import annotations

import json

from diagnose.findings import Finding, Fix
from diagnose.rules.base import Context, Group, Rule, lead

__all__ = ["RULES"]


def _pool(finding: Finding) -> str:
    return finding.nodepool or "<nodepool>"


def _no_compatible(finding: Finding, group: Group, context: Context) -> None:
    reason = group.latest.message.strip().splitlines()[0][:300] if group.latest.message else ""
    finding.summary = (
        f"{lead(finding)} because no instance type of NodePool {_pool(finding)} is compatible with the pods' "
        "requests, selectors or tolerations."
    )
    if reason:
        finding.details.append(f"Karpenter said: {reason}")
    finding.fixes.append(
        Fix(
            "nodepool-change",
            "Compare the NodePool's requirements (SKU family, CPU, arch, zones, capacity type) with what the pods ask "
            "for, and widen whichever side is too narrow.",
            f"kubectl get nodepool {_pool(finding)} -o jsonpath='{{.spec.template.spec.requirements}}'",
        )
    )


def _limit(finding: Finding, group: Group, context: Context) -> None:
    finding.summary = (
        f"{lead(finding)} because NodePool {_pool(finding)} has reached its spec.limits: no new node may be created "
        "for it."
    )
    patch = json.dumps({"spec": {"limits": {"cpu": "<new-cpu-limit>"}}})
    finding.fixes.append(
        Fix(
            "nodepool-change",
            "Raise the NodePool's limits (or remove them), or let another NodePool take these pods.",
            f"kubectl patch nodepool {_pool(finding)} --type merge -p '{patch}'",
            f"kubectl get nodepool {_pool(finding)} -o jsonpath='{{.spec.limits}} {{.status.resources}}'",
        )
    )


def _nodeclass(finding: Finding, group: Group, context: Context) -> None:
    finding.summary = (
        f"{lead(finding)} because the AKSNodeClass of NodePool {_pool(finding)} is not Ready, so Karpenter does "
        "not use the NodePool."
    )
    finding.fixes.append(
        Fix(
            "config",
            "Read the AKSNodeClass status conditions (ImagesReady, SubnetsReady, KubernetesVersionReady) and fix the "
            "one that is False.",
            "kubectl get aksnodeclass -o yaml",
            f"kubectl get nodepool {_pool(finding)} -o jsonpath='{{.status.conditions}}'",
        )
    )


RULES = (
    Rule(("no-compatible-instance-types",), lambda o: (o.category, o.nodepool), _no_compatible),
    Rule(("nodepool-limit",), lambda o: (o.category, o.nodepool), _limit),
    Rule(("nodeclass-not-ready",), lambda o: (o.category, o.nodepool), _nodeclass),
)
