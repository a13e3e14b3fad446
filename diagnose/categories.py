"""Categories: which diagnosis category a line or event belongs to, if any.

The cloud error a line carries decides first (``provisioner.model.errors.classify`` on the
error code and message, wherever the log shape put them). When the cloud error does not
tell, Karpenter's own words do ("incompatible with nodepool", "exceed limits for
nodepool", "insufficient capacity" …), then the event kind, then the category ingest may
have set. A cloud error with a code during launch that nothing explains is
``launch-failed``; any other error line is ``unknown-error``, kept verbatim. Success
events and the scheduler's own "FailedScheduling" (the symptom, not a cause) are not
errors.
"""

from __future__ import annotations

import re
from typing import Any

from diagnose.findings import CATEGORIES
from provisioner.model.errors import CloudError, classify

__all__ = [
    "LAUNCH_EVENTS",
    "SCHEDULED_EVENTS",
    "SUCCESS_EVENTS",
    "SYMPTOM_EVENTS",
    "categorize",
    "classified",
    "error_text",
    "text_of",
]

_ERROR_CODE = re.compile(r"ERROR CODE:\s*(\w+)|\"code\":\s*\"(\w+)\"|^\((\w+)\)")
_STATUS = re.compile(r"RESPONSE (\d{3})")

SUCCESS_EVENTS = ("nodeclaim.launched", "nodeclaim.registered", "nodeclaim.initialized")
SCHEDULED_EVENTS = ("k8s.Scheduled",)
# Warning events that are the symptom (a pod waiting), not a cause.
SYMPTOM_EVENTS = ("k8s.FailedScheduling", "pod.unschedulable", "k8s.Nominated")
LAUNCH_EVENTS = ("nodeclaim.launch_failed", "vm.creating", "nic.creating", "nodeclaim.launch_timeout")


def text_of(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return str(value) if value is not None else ""


def error_text(row: dict[str, Any]) -> tuple[str, str]:
    """The cloud error's code and message; falls back to the line's own text (and raw line)."""
    code = text_of(row, "error_code")
    message = text_of(row, "error_message")
    if not message:
        text, raw = text_of(row, "message"), text_of(row, "raw")
        message = f"{text}\n{raw}" if raw and text and text not in raw else (raw or text)
    if not code:
        match = _ERROR_CODE.search(message)
        if match:
            code = next(g for g in match.groups() if g)
    return code, message


_EVENT_CATEGORIES = {
    "nodeclaim.registration_timeout": "registration-timeout",
    "nodeclaim.launch_timeout": "launch-failed",
    "nodepool.limit_reached": "nodepool-limit",
    "nodepool.no_compatible": "no-compatible-instance-types",
    "k8s.NoCompatibleInstanceTypes": "no-compatible-instance-types",
    "cloud.throttled": "throttled",
}
_QUOTA_SCOPES = {"regional": "regional-vcpu-quota", "family": "family-vcpu-quota", "spot": "spot-vcpu-quota"}
_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "no-compatible-instance-types",
        (
            "no instance type satisfied",
            "incompatible with nodepool",
            "no compatible instance types",
            "filtered out all compatible",
            "no instance types satisf",
        ),
    ),
    (
        "nodepool-limit",
        ("exceed limits for nodepool", "exceeds limits for nodepool", "nodepool limit", "limits exceeded"),
    ),
    (
        "nodeclass-not-ready",
        (
            "nodeclass not ready",
            "nodeclass is not ready",
            "nodeclassready=false",
            "nodeclass not found",
            "nodeclass",
        ),
    ),
    (
        "registration-timeout",
        ("registration timed out", "registration timeout", "failed to register", "not registered after"),
    ),
    ("insufficient-capacity", ("insufficient capacity", "all requested instance types were unavailable")),
)
_LAUNCH_WORDS = (
    "failed launching",
    "creating virtual machine",
    "creating network interface",
    "creating instance",
    "launch",
)


def categorize(row: dict[str, Any]) -> str | None:
    """The diagnosis category of a line, or None when the line carries no error."""
    return classified(row)[0]


_NOT_AN_ERROR: tuple[None, None] = (None, None)


def classified(row: dict[str, Any]) -> tuple[str | None, CloudError | None]:
    """(category, the cloud error as classified) of a line; (None, None) when it carries no error."""
    event = text_of(row, "event")
    if event in SUCCESS_EVENTS or (event in SYMPTOM_EVENTS and not _is_karpenter_error(row)):
        return _NOT_AN_ERROR
    if event == "quota.blocked":
        return _QUOTA_SCOPES.get(text_of(row, "quota_scope"), "regional-vcpu-quota"), None
    if event in _EVENT_CATEGORIES:
        return _EVENT_CATEGORIES[event], None
    given = text_of(row, "category")
    has_error = bool(text_of(row, "error_code") or text_of(row, "error_message") or given)
    level = text_of(row, "level")
    if not has_error and level not in ("ERROR", "WARN") and event != "nodeclaim.launch_failed":
        return _NOT_AN_ERROR
    code, message = error_text(row)
    cloud = classify(code, message)
    if cloud.category != "unknown-error":
        return cloud.category, cloud
    return _fallback_category(row, event, given, has_error, level, code, message), cloud


def _fallback_category(
    row: dict[str, Any], event: str, given: str, has_error: bool, level: str, code: str, message: str
) -> str | None:
    """Categories told by Karpenter's own words, when the cloud error does not tell."""
    lowered = f"{message} {text_of(row, 'message')} {text_of(row, 'reason')}".lower()
    for category, phrases in _PHRASES:
        if category == "nodeclass-not-ready":
            if "nodeclass" in lowered and (
                "not ready" in lowered or "not found" in lowered or "ready=false" in lowered
            ):
                return category
            continue
        if any(phrase in lowered for phrase in phrases):
            return category
    if given in CATEGORIES and given != "unknown-error":
        return given
    launching = event in LAUNCH_EVENTS or any(word in lowered for word in _LAUNCH_WORDS)
    if launching and (code or _STATUS.search(text_of(row, "raw") or message)):
        return "launch-failed"
    if level == "WARN" and not has_error and text_of(row, "source") != "event":
        return None  # a warning line without an error is not a cause
    return "unknown-error"


def _is_karpenter_error(row: dict[str, Any]) -> bool:
    """A FailedScheduling from Karpenter carries its reason ("incompatible with nodepool …")."""
    lowered = f"{text_of(row, 'message')} {text_of(row, 'error_message')}".lower()
    return any(phrase in lowered for _, phrases in _PHRASES[:2] for phrase in phrases)
