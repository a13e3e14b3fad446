"""Reading the cloud error out of an error text, whatever wrapped it.

A Karpenter ``error`` field (or an alpha ERROR message) carries the cloud's refusal
inside layers of wrapping. Recognised, in this order:

- the Azure Go SDK: ``PUT https://…`` / ``RESPONSE 409: 409 Conflict`` /
  ``ERROR CODE: OperationNotAllowed`` / dashes / the JSON body ``{"error": {"code", "message"}}``;
- the Azure Python SDK (this project): ``(Code) Message`` optionally followed by
  ``Code: …`` / ``Message: …`` lines;
- the older autorest Go SDK: ``Code="…" Message="…"``;
- AWS EC2 codes (``InsufficientInstanceCapacity: …``, ``VcpuLimitExceeded: …`` …);
- Karpenter's own generic reasons ("insufficient capacity, all requested instance types
  were unavailable during launch", "no instance type satisfied resources", "all available
  instance types exceed limits for nodepool", registration and launch timeouts).

A code goes through ``provisioner.model.errors.classify`` for the category and the quota
numbers. An error text with neither a code nor a known reason keeps its text as
``message`` and gets no category (the rules decide what an unexplained error means).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from provisioner.model.errors import QuotaExceeded, classify

__all__ = ["ErrorFacts", "analyse"]


@dataclass(frozen=True, slots=True)
class ErrorFacts:
    code: str | None
    message: str | None
    category: str | None
    quota_scope: str | None = None
    quota_name: str | None = None
    quota_limit: int | None = None
    quota_usage: int | None = None
    quota_required: int | None = None
    quota_new_limit: int | None = None
    region: str | None = None


_GO_CODE = re.compile(r"ERROR CODE: ([A-Za-z][\w.]*)")
_GO_STATUS = re.compile(r"RESPONSE (\d{3})")
_BODY_CODE = re.compile(r'"code"\s*:\s*"([^"\\]+)"')
_BODY_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"')
_PY_SDK = re.compile(r"\((?!Minimum\))([A-Z][A-Za-z]+(?:\.[A-Za-z]+)?)\) (.+?)(?:\nCode: |\Z)", re.DOTALL)
_AUTOREST = re.compile(r'Code="([^"]+)"\s+Message="((?:[^"\\]|\\.)*)"')
_STATUS_CODE = re.compile(r"StatusCode=(\d{3})")
_AWS_CODES = {
    "InsufficientInstanceCapacity": "insufficient-capacity",
    "UnfulfillableCapacity": "insufficient-capacity",
    "InsufficientFreeAddressesInSubnet": "subnet-full",
    "MaxSpotInstanceCountExceeded": "spot-vcpu-quota",
    "VcpuLimitExceeded": "regional-vcpu-quota",
    "UnauthorizedOperation": "authorization-failed",
    "RequestLimitExceeded": "throttled",
    "InvalidAMIID.NotFound": "image-not-found",
}
_AWS = re.compile(r"\b(" + "|".join(re.escape(c) for c in _AWS_CODES) + r"):\s*(.+)", re.DOTALL)
_LOCATION = re.compile(r"(?:Location: |in location '|/locations/)([a-z][a-z0-9]+)")

# Karpenter's generic reasons, lower-case substrings.
GENERIC: tuple[tuple[str, str], ...] = (
    ("all available instance types exceed limits", "nodepool-limit"),
    ("exceed limits for nodepool", "nodepool-limit"),
    ("insufficient capacity", "insufficient-capacity"),
    ("all requested instance types were unavailable", "insufficient-capacity"),
    ("no instance type satisfied", "no-compatible-instance-types"),
    ("no instance type met", "no-compatible-instance-types"),
    ("no instance types satisfy", "no-compatible-instance-types"),
    ("requirements filtered out all compatible available instance types", "no-compatible-instance-types"),
    ("registration timeout", "registration-timeout"),
    ("registration timed out", "registration-timeout"),
    ("launch timeout", "registration-timeout"),
    ("launch timed out", "registration-timeout"),
    ("nodeclass not ready", "nodeclass-not-ready"),
    ("nodeclass is not ready", "nodeclass-not-ready"),
)


def generic_category(text: str) -> str | None:
    lowered = text.lower()
    for phrase, category in GENERIC:
        if phrase in lowered:
            return category
    return None


def _unescape(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _go_sdk(text: str) -> tuple[str, str, int | None] | None:
    code_match = _GO_CODE.search(text)
    start = code_match.end() if code_match else text.find("RESPONSE ")
    if start < 0:
        return None
    status_match = _GO_STATUS.search(text)
    status = int(status_match.group(1)) if status_match else None
    code = code_match.group(1) if code_match else ""
    message = ""
    brace, end = text.find("{", start), text.rfind("}")
    if brace >= 0 and end > brace:
        try:
            body = json.loads(text[brace : end + 1])
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            code = code or str(error.get("code") or "")
            message = str(error.get("message") or "")
        else:
            body_text = text[brace : end + 1]
            inner = _BODY_MESSAGE.search(body_text)
            message = _unescape(inner.group(1)) if inner else ""
            if not code:
                inner_code = _BODY_CODE.search(body_text)
                code = inner_code.group(1) if inner_code else ""
    if not code:
        return None
    return code, message or text, status


def _find_code(text: str) -> tuple[str, str, int | None, str | None] | None:
    """(code, cloud message, HTTP status, category override)."""
    found = _go_sdk(text)
    if found:
        return (*found, None)
    match = _AUTOREST.search(text)
    if match:
        status = _STATUS_CODE.search(text)
        return match.group(1), _unescape(match.group(2)), int(status.group(1)) if status else None, None
    match = _PY_SDK.search(text)
    if match:
        return match.group(1), match.group(2).strip(), None, None
    match = _AWS.search(text)
    if match:
        return match.group(1), match.group(2).strip(), None, _AWS_CODES[match.group(1)]
    return None


def analyse(text: str) -> ErrorFacts:
    """Everything an error text says about the cloud error behind it."""
    found = _find_code(text)
    generic = generic_category(text)
    location = _LOCATION.search(text)
    region = location.group(1) if location else None
    if found is None:
        if "quota" in text.lower():
            error = classify("", text)
            if isinstance(error, QuotaExceeded):
                return _quota_facts("", text, error)
        return ErrorFacts(None, text, generic, region=region)
    code, message, status, override = found
    if override:
        return ErrorFacts(code, message, override, region=region)
    error = classify(code, message, status)
    if isinstance(error, QuotaExceeded):
        return _quota_facts(code, message, error)
    category = error.category
    if category == "unknown-error" and generic:
        category = generic
    return ErrorFacts(code, message, category, region=region)


def _quota_facts(code: str, message: str, error: QuotaExceeded) -> ErrorFacts:
    return ErrorFacts(
        code or None,
        message,
        error.category,
        error.scope,
        error.quota,
        error.limit,
        error.usage,
        error.required,
        error.new_limit,
        error.region or None,
    )
