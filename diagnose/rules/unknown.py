"""Anything else: an error no other rule explains, quoted verbatim and never dropped.

Lines that differ only in names, ids and numbers are one finding, so a flood of the same
unexplained error still reads as one line with its count.
"""

from __future__ import annotations

from diagnose.correlate import Occurrence
from diagnose.findings import WARNING, Finding, Fix
from diagnose.rules.base import Context, Group, Rule, lead
from diagnose.rules.launch import message_shape

__all__ = ["RULE"]


def _key(occurrence: Occurrence) -> tuple[str, ...]:
    return (occurrence.category, occurrence.code, message_shape(occurrence.message))


def _explain(finding: Finding, group: Group, context: Context) -> None:
    text = finding.error_message.strip()
    first_line = text.splitlines()[0] if text else "(no text)"
    code = f" ({finding.error_code})" if finding.error_code else ""
    if finding.pod_count or finding.nodeclaims:
        finding.summary = f"{lead(finding)}; an error karp-diagnose does not recognise was logged{code}: {first_line}"
    else:
        finding.summary = f"Unrecognised error{code}: {first_line}"
    finding.details.append(f"Verbatim: {text}")
    finding.fixes.append(
        Fix("investigate", "Read the quoted error and the lines around the evidence; it may or may not block pods.")
    )


RULE = Rule(("unknown-error",), _key, _explain, severity=WARNING)
