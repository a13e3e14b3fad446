"""Launch and registration: the VM could not be made from its parts, or never joined.

* ``image-not-found``: the node image the AKSNodeClass resolved to does not exist (or is not
  shared with the subscription).
* ``invalid-vm-size``: Azure does not accept the size name in that region or subscription.
* ``launch-failed``: a cloud call failed during launch for a reason not covered by a more
  precise category; the cloud's code and message are quoted.
* ``registration-timeout``: the VM was created but no Node registered for the NodeClaim in
  time (15 minutes), so Karpenter deleted the claim: bootstrap, network or identity trouble.
"""

from __future__ import annotations

import re

from diagnose import fixes
from diagnose.correlate import Occurrence
from diagnose.findings import Finding, Fix
from diagnose.rules.base import Context, Group, Rule, claims_phrase, lead, sku_phrase
from provisioner.model.errors import ImageNotFound, InvalidVmSize

__all__ = ["RULES", "message_shape"]

_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_VM = re.compile(r"aks-[A-Za-z0-9.-]+")
_NUMBER = re.compile(r"\d+")


def message_shape(message: str) -> str:
    """The message with names, ids and numbers blanked: lines that differ only there are one cause."""
    shape = _GUID.sub("<id>", message)
    shape = _VM.sub("<vm>", shape)
    return _NUMBER.sub("#", shape).strip()[:240]


def _image_key(occurrence: Occurrence) -> tuple[str, ...]:
    cloud = occurrence.cloud
    return (occurrence.category, cloud.image if isinstance(cloud, ImageNotFound) else "")


def _image(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    image = cloud.image if isinstance(cloud, ImageNotFound) and cloud.image else "the resolved node image"
    finding.summary = (
        f"{lead(finding)} because {image} does not exist or is not available to the subscription "
        f"({finding.error_code or 'ImageNotFound'}) when {claims_phrase(finding)} launched."
    )
    finding.fixes.append(
        Fix(
            "config",
            "Check the AKSNodeClass image settings (imageFamily, image version) and that the community gallery image "
            "exists in the region.",
            "kubectl get aksnodeclass -o yaml",
        )
    )


def _size_key(occurrence: Occurrence) -> tuple[str, ...]:
    cloud = occurrence.cloud
    return (occurrence.category, cloud.sku if isinstance(cloud, InvalidVmSize) and cloud.sku else occurrence.instance_type)


def _invalid_size(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    size = cloud.sku if isinstance(cloud, InvalidVmSize) and cloud.sku else sku_phrase(finding)
    region = finding.region or "<region>"
    finding.summary = (
        f"{lead(finding)} because Azure does not accept the VM size {size}"
        + (f" in {finding.region}" if finding.region else "")
        + f" ({finding.error_code or 'InvalidVMSize'})."
    )
    sizes = [size] if isinstance(cloud, InvalidVmSize) and cloud.sku else finding.instance_types
    requirement: dict[str, object] = {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": sizes}
    finding.fixes.append(
        Fix(
            "nodepool-change",
            f"Keep NodePool {finding.nodepool or '<nodepool>'} away from that size.",
            fixes.nodepool_patch(finding.nodepool, [requirement]),
            f"az vm list-sizes -l {region} -o table",
        )
    )


def _launch_key(occurrence: Occurrence) -> tuple[str, ...]:
    return (occurrence.category, occurrence.code, message_shape(occurrence.message))


def _launch_failed(finding: Finding, group: Group, context: Context) -> None:
    code = f" with {finding.error_code}" if finding.error_code else ""
    finding.summary = (
        f"{lead(finding)} because a cloud call failed{code} while launching {claims_phrase(finding)} "
        f"({sku_phrase(finding)})."
    )
    finding.details.append(f"Cloud error, verbatim: {finding.error_message}")
    finding.fixes.append(
        Fix(
            "investigate",
            "Read the quoted error; if it names a resource or setting, fix that and the next launch retries.",
            f"kubectl describe nodeclaim {finding.nodeclaims[0] if finding.nodeclaims else '<nodeclaim>'}",
        )
    )


def _registration(finding: Finding, group: Group, context: Context) -> None:
    finding.summary = (
        f"{lead(finding)} because the VM of {claims_phrase(finding)} was created but no Node registered in "
        "time; Karpenter deleted the claim and will try again."
    )
    vm = f"aks-{finding.nodeclaims[0]}" if finding.nodeclaims else "<vm-name>"
    finding.fixes.append(
        Fix(
            "investigate",
            "Check the node's bootstrap: boot log and extensions of the VM, outbound connectivity to the API server, "
            "and the kubelet identity.",
            f"az vm boot-diagnostics get-boot-log -g <node-resource-group> -n {vm}",
            f"az vm get-instance-view -g <node-resource-group> -n {vm} --query instanceView.extensions",
        )
    )


RULES = (
    Rule(("image-not-found",), _image_key, _image),
    Rule(("invalid-vm-size",), _size_key, _invalid_size),
    Rule(("launch-failed",), _launch_key, _launch_failed),
    Rule(("registration-timeout",), lambda o: (o.category, o.nodepool), _registration),
)
