"""The cloud refused to answer: throttling (429) and missing permissions (403).

* ``throttled``: Azure Resource Manager rejected calls for a while (``TooManyRequests``,
  ``SubscriptionRequestsThrottled``) and says when to retry; launches are delayed, not lost,
  so this is a warning.
* ``authorization-failed``: the controller's identity may not perform an action on a scope
  (``AuthorizationFailed``); nothing launches until a role is assigned.
"""

from __future__ import annotations

import re

from diagnose.correlate import Occurrence
from diagnose.findings import WARNING, Finding, Fix
from diagnose.rules.base import Context, Group, Rule, claims_phrase, lead
from provisioner.model.errors import AuthorizationFailed, Throttled

__all__ = ["RULES"]

_CLIENT = re.compile(r"client '([^']+)'")


def _throttled(finding: Finding, group: Group, context: Context) -> None:
    waits = [o.cloud.retry_after for o in group.occurrences if isinstance(o.cloud, Throttled) and o.cloud.retry_after]
    longest = max(waits) if waits else 0
    finding.summary = (
        f"{lead(finding)} while Azure throttles the subscription's requests "
        f"({finding.error_code or 'TooManyRequests'}, {finding.occurrences} times"
        + (f", retry after up to {longest:g} s" if longest else "")
        + ")."
    )
    finding.fixes.append(
        Fix(
            "retry",
            "Launches resume once the throttling window passes; if it persists, look for other clients hammering the "
            "same subscription (scripts, other controllers) and slow them down.",
            "",
            "az monitor activity-log list --max-events 50 --query \"[?contains(status.value, 'Throttled')]\" -o table",
        )
    )


def _auth_key(occurrence: Occurrence) -> tuple[str, ...]:
    cloud = occurrence.cloud
    if isinstance(cloud, AuthorizationFailed):
        return (occurrence.category, cloud.action, cloud.scope)
    return (occurrence.category, "", "")


def _authorization(finding: Finding, group: Group, context: Context) -> None:
    cloud = group.latest.cloud
    action = cloud.action if isinstance(cloud, AuthorizationFailed) else ""
    scope = cloud.scope if isinstance(cloud, AuthorizationFailed) else ""
    finding.summary = (
        f"{lead(finding)} because the controller's identity may not "
        + (f"perform {action}" if action else "perform a launch call")
        + (f" on {scope}" if scope else "")
        + f" (AuthorizationFailed) for {claims_phrase(finding)}."
    )
    client_match = _CLIENT.search(finding.error_message)
    client = client_match.group(1) if client_match else "<controller-client-id>"
    role = "Virtual Machine Contributor" if "Compute" in action else "Network Contributor" if "Network" in action else "Contributor"
    finding.fixes.append(
        Fix(
            "permission",
            f"Grant the controller's managed identity a role that allows {action or 'the action'} on that scope.",
            f"az role assignment create --assignee {client} --role \"{role}\" --scope {scope or '<scope>'}",
            f"az role assignment list --assignee {client} --scope {scope or '<scope>'} -o table",
        )
    )


RULES = (
    Rule(("throttled",), lambda o: (o.category,), _throttled, severity=WARNING),
    Rule(("authorization-failed",), _auth_key, _authorization),
)
