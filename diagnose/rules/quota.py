"""vCPU quota refusals: regional (Total Regional vCPUs), per VM family, and spot.

Azure refuses a VM create with HTTP 409 ``OperationNotAllowed`` and prints the four numbers
that matter: current limit, current usage, additional required and the minimum new limit.
One quota in one region is one cause, however many NodeClaims and retries hit it. The fix
is the quota request with those numbers; the alternative is the NodePool change that fits
today's headroom (sizes of the allowed family small enough to be created now, and how many
of the pending pods they would hold), or, for spot, falling back to on-demand.
"""

from __future__ import annotations

from diagnose import fixes
from diagnose.correlate import ClaimTimeline, Occurrence
from diagnose.findings import Finding, Fix, LiveQuota, QuotaFigures
from diagnose.rules.base import Context, Group, Rule, claims_phrase, fmt_time, lead, sku_phrase
from diagnose.sizing import alternatives, best_mix, derive_pod_requests
from provisioner.model.errors import QuotaScope
from provisioner.model.instance_type import parse_sku_name

__all__ = ["RULE"]

_SCOPES = {
    "regional-vcpu-quota": QuotaScope.REGIONAL,
    "family-vcpu-quota": QuotaScope.FAMILY,
    "spot-vcpu-quota": QuotaScope.SPOT,
}


_SOURCE_LABEL = {"snapshot": "saved usages file", "azure": "Azure usages API", "log": "the log"}


def _source_of(context: Context) -> str:
    return str(getattr(context.quota_source, "source", "azure"))


def _key(occurrence: Occurrence) -> tuple[str, ...]:
    name = occurrence.quota.quota if occurrence.quota else ""
    return (occurrence.category, (occurrence.region or "").lower(), name)


def _figures(finding: Finding, group: Group, context: Context) -> QuotaFigures | None:
    numbered = [o for o in group.occurrences if o.quota is not None]
    if not numbered:
        return None
    latest = numbered[-1]
    numbers = latest.quota
    assert numbers is not None
    name = numbers.quota or {"spot-vcpu-quota": "lowPriorityCores"}.get(finding.category, "cores")
    # limit and usage through the QuotaSource port: the log's own figures, latest per quota
    logged = context.log_quota.read(finding.region or numbers.region).get(name)
    limit, usage = (logged.limit, logged.usage) if logged is not None else (numbers.limit, numbers.usage)
    figures = QuotaFigures(
        name=name,
        scope=numbers.scope or _SCOPES[finding.category],
        limit=limit,
        usage=usage,
        required=numbers.required,
        new_limit=numbers.new_limit,
        source="log",
        read_at=latest.time,
    )
    if context.quota_source is not None and finding.region:
        snapshot = context.quota_source.read(finding.region)
        item = snapshot.get(figures.name)
        if item is not None:
            live = LiveQuota(item.limit, item.usage, snapshot.read_at)
            figures = QuotaFigures(
                figures.name,
                figures.scope,
                figures.limit,
                figures.usage,
                figures.required,
                figures.new_limit,
                figures.source,
                figures.read_at,
                live,
            )
    return figures


def _latest_claim(finding: Finding, context: Context) -> ClaimTimeline | None:
    claims = [context.correlation.claims[n] for n in finding.nodeclaims if n in context.correlation.claims]
    with_requests = [c for c in claims if c.requests_cpu_m]
    return with_requests[-1] if with_requests else (claims[-1] if claims else None)


def _alternative(finding: Finding, quota: QuotaFigures, headroom: int, context: Context) -> Fix | None:
    selected = finding.instance_types[-1] if finding.instance_types else ""
    claim = _latest_claim(finding, context)
    if not selected or claim is None or finding.resolved:
        return None
    pending = claim.pod_count or finding.pod_count
    per_pod = derive_pod_requests(
        claim.requests_cpu_m, claim.requests_memory, claim.requests_pods, pending, claim.name
    )
    if per_pod is None:
        return None
    finding.per_pod = per_pod
    options = alternatives(selected, finding.region, headroom, per_pod, pending)
    finding.alternatives = options
    mix = best_mix(options, headroom, pending)
    sku = parse_sku_name(selected)
    whose = "" if pending == finding.pod_count else f" of NodeClaim {claim.name}"
    fix = fixes.nodepool_sizes(
        finding.nodepool, headroom, sku.family_letter if sku else "", options, mix, pending, per_pod, whose
    )
    placed = min(sum(o.pods_per_node * n for o, n in mix), pending)
    if mix and placed < pending:
        claim_pods = claim.pods or finding.pods
        named_left = claim_pods[placed:pending] if len(claim_pods) > placed else []
        shown = named_left[:5]
        unnamed = pending - placed - len(shown)
        which = ", ".join(shown)
        if unnamed > 0:
            which += f"{' and ' if which else ''}{unnamed} other(s)"
        finding.details.append(
            f"With that change {pending - placed} pods stay Pending (the scheduler picks which): {which}."
        )
    return fix


def _spot_fallback(finding: Finding) -> Fix:
    snippet = (
        f"kubectl edit nodepool {finding.nodepool or '<nodepool>'}   # in spec.template.spec.requirements:\n"
        "- key: karpenter.sh/capacity-type\n  operator: In\n  values: [\"spot\", \"on-demand\"]"
    )
    return Fix(
        "nodepool-change",
        "Let the NodePool fall back to on-demand capacity while the spot quota is exhausted "
        "(on-demand counts against the regional and family quotas instead).",
        snippet,
    )


def _explain(finding: Finding, group: Group, context: Context) -> None:
    quota = _figures(finding, group, context)
    finding.quota = quota
    where = f" in {finding.region}" if finding.region else ""
    if quota is None:
        finding.summary = (
            f"{lead(finding)} because a vCPU quota{where} refused {sku_phrase(finding)}; the input does not "
            "carry the quota's numbers."
        )
        finding.fixes.append(Fix("investigate", "Check the quota figures.", "", fixes.check_usage(finding.region)))
        return
    headroom = quota.headroom
    finding.summary = (
        f"{lead(finding)} because {claims_phrase(finding)} {'needs' if len(finding.nodeclaims) <= 1 else 'need'} "
        f"{sku_phrase(finding) if finding.instance_types else f'{quota.required} more vCPUs'} and the "
        f"{fixes.quota_label(quota)}{where} has {headroom} vCPUs left (limit {quota.limit}, usage {quota.usage}, "
        f"required {quota.required}): the limit must be at least {quota.new_limit}."
    )
    if quota.live is not None:
        live = quota.live
        headroom = max(live.limit - live.usage, 0)
        finding.details.append(
            f"Figures read at {fmt_time(live.read_at)} ({_SOURCE_LABEL.get(_source_of(context), 'another source')}): "
            f"limit {live.limit}, usage {live.usage}, {headroom} vCPUs left."
        )
        if live.limit >= quota.new_limit:
            finding.details.append("The limit has been raised since: the next attempt should succeed.")
    if finding.occurrences > 1:
        finding.details.append(
            f"The same refusal repeated {finding.occurrences} times between {fmt_time(finding.first_seen)} "
            f"and {fmt_time(finding.last_seen)}."
        )
    finding.fixes.append(fixes.quota_request(quota, finding.region, context.subscription))
    if quota.scope == QuotaScope.SPOT:
        finding.fixes.append(_spot_fallback(finding))
        return
    alternative = _alternative(finding, quota, headroom, context)
    if alternative is not None:
        finding.fixes.append(alternative)


RULE = Rule(categories=tuple(_SCOPES), key=_key, explain=_explain)
