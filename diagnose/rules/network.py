"""Networking refusals: a full subnet, the public IP limit, and a NIC still reserved.

* ``subnet-full``: the node subnet has no free address for the new NIC (``SubnetIsFull``,
  ``InsufficientSubnetSize``); often NICs left behind by failed launches hold the addresses.
* ``public-ip-limit``: the subscription's public IP address limit in the region is reached.
* ``nic-reserved``: Azure keeps a NIC reserved for 180 s after a failed VM create that used
  it (``NicReservedForAnotherVm``); it clears by itself, so it is a warning unless it repeats.
"""

from __future__ import annotations

from diagnose.correlate import Occurrence
from diagnose.findings import WARNING, Finding, Fix
from diagnose.rules.base import Context, Group, Rule, claims_phrase, lead
from provisioner.model.errors import NicReserved, PublicIPLimit, SubnetFull

__all__ = ["RULES"]


def _subnet_key(occurrence: Occurrence) -> tuple[str, ...]:
    cloud = occurrence.cloud
    return (occurrence.category, cloud.subnet if isinstance(cloud, SubnetFull) else "")


def _subnet_full(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    subnet = cloud.subnet if isinstance(cloud, SubnetFull) else ""
    prefix = cloud.prefix if isinstance(cloud, SubnetFull) else ""
    named = f"subnet {subnet}" + (f" ({prefix})" if prefix else "") if subnet else "the node subnet"
    finding.summary = (
        f"{lead(finding)} because {named} has no free IP address for the network interface of "
        f"{claims_phrase(finding)} ({finding.error_code or 'SubnetIsFull'})."
    )
    show = (
        f"az network vnet subnet show --ids {subnet} --query \"{{prefix:addressPrefix, used:length(ipConfigurations)}}\""
        if subnet.startswith("/subscriptions/")
        else "az network vnet subnet list -g <vnet-resource-group> --vnet-name <vnet> -o table"
    )
    finding.fixes.append(
        Fix(
            "investigate",
            "Look for network interfaces that belong to no VM (left behind by failed launches) and delete them.",
            "az network nic list --query \"[?virtualMachine==null].{name:name, group:resourceGroup}\" -o table",
            show,
        )
    )
    finding.fixes.append(
        Fix(
            "config",
            "Give the nodes a larger subnet (a new AKSNodeClass vnetSubnetID with a bigger prefix), or lower maxPods "
            "if the CNI pre-allocates pod addresses.",
        )
    )


def _public_ip(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    limit = cloud.limit if isinstance(cloud, PublicIPLimit) else None
    region = finding.region or "<region>"
    finding.summary = (
        f"{lead(finding)} because the subscription reached its public IP address limit"
        + (f" of {limit}" if limit else "")
        + (f" in {finding.region}" if finding.region else "")
        + " (PublicIPCountLimitReached)."
    )
    scope = f"/subscriptions/{context.subscription or '<subscription-id>'}/providers/Microsoft.Network/locations/{region}"
    value = f"{limit * 2}" if limit else "<new-limit>"
    finding.fixes.append(
        Fix(
            "quota-request",
            "Raise the public IP address limit, or stop giving nodes public IPs (AKSNodeClass / outbound type).",
            f"az quota update --resource-name PublicIPAddresses --scope {scope} --limit-object value={value}",
            f"az network list-usages -l {region} -o table",
        )
    )


def _nic_reserved(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    seconds = cloud.retry_after if isinstance(cloud, NicReserved) else 180
    finding.summary = (
        f"{lead(finding)} while Azure keeps the network interface of {claims_phrase(finding)} reserved for "
        f"another VM for {seconds} s after a failed create (NicReservedForAnotherVm)."
    )
    if finding.occurrences > 1 and not finding.resolved:
        finding.details.append("It repeated: check for a VM create that keeps failing with this NIC.")
    finding.fixes.append(
        Fix(
            "retry",
            f"Wait {seconds} s: the reservation clears by itself and the launch is retried. If it keeps repeating, "
            "delete the leftover NIC so a fresh one is made.",
            "az network nic delete --ids <nic-resource-id>",
            "az network nic list --query \"[?virtualMachine==null].name\" -o tsv",
        )
    )


RULES = (
    Rule(("subnet-full",), _subnet_key, _subnet_full),
    Rule(("public-ip-limit",), lambda o: (o.category, o.region.lower()), _public_ip),
    Rule(("nic-reserved",), lambda o: (o.category,), _nic_reserved, severity=WARNING),
)
