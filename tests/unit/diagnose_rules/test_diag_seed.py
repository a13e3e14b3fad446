"""The founding log, verbatim: one blocking regional-vcpu-quota finding with every number and both fixes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from diagnose.api import analyse, diagnose, report_to_json
from diagnose.findings import BLOCKING, InputStats


def test_seed_gives_exactly_one_blocking_regional_quota_finding(log: Any) -> None:
    report = diagnose([str(log.SEED)])
    assert report.input.lines == 10
    assert report.input.parsed + report.input.repaired + report.input.unparsed == 10
    assert report.input.repaired == 1
    assert len(report.findings) == 1
    finding = report.findings[0]
    assert finding.category == "regional-vcpu-quota"
    assert finding.severity == BLOCKING
    assert finding.region == "westus2"
    assert finding.quota is not None
    quota = finding.quota
    assert (quota.name, quota.limit, quota.usage, quota.required, quota.new_limit) == ("cores", 20, 14, 16, 30)
    assert quota.headroom == 6
    assert quota.source == "log"
    assert quota.read_at == datetime(2023, 11, 24, 15, 17, 54, 619000, tzinfo=UTC)
    assert finding.instance_types == ["Standard_D16ls_v5"]
    assert finding.instance_type_vcpus == {"Standard_D16ls_v5": 16}
    assert finding.nodeclaims == ["general-purpose-pq7gl"]
    assert finding.nodepool == "general-purpose"
    assert finding.pod_count == 10
    assert len(finding.pods) == 5
    assert finding.pods[0] == "default/inflate-74ccd665f4-79x4g"
    assert finding.workloads == ["Deployment default/inflate"]
    assert finding.summary.startswith("10 pods of default/inflate are Pending because")
    assert finding.occurrences == 1
    assert finding.resources == [
        "Microsoft.Compute/virtualMachines/aks-general-purpose-pq7gl "
        "(resource group MC_fantastic-succotash-jj9vrqv99pvf557g_karpenter_westus2)"
    ]
    assert finding.first_seen == finding.last_seen == quota.read_at
    assert {(e.line, e.role) for e in finding.evidence} >= {(1, "pods"), (3, "nodeclaim"), (4, "instance-type"), (10, "error")}


def test_seed_fixes_are_the_quota_request_and_a_nodepool_change_within_six_vcpus(log: Any) -> None:
    finding = diagnose([str(log.SEED)]).findings[0]
    kinds = [fix.kind for fix in finding.fixes]
    assert kinds == ["quota-request", "nodepool-change"]
    request, change = finding.fixes
    assert request.command == (
        "az quota update --resource-name cores --scope "
        "/subscriptions/<subscription-id>/providers/Microsoft.Compute/locations/westus2 "
        "--limit-object value=30 --resource-type dedicated"
    )
    assert request.check == "az vm list-usage -l westus2 -o table"
    assert "karpenter.azure.com/sku-cpu" in change.command and '"values":["7"]' in change.command
    assert change.command.startswith("kubectl patch nodepool general-purpose --type json")
    # per-pod requests derived from the NodeClaim: 10 pods, cpu 10250m, pods 15 -> 1 CPU + 250m overhead, 5 DaemonSet pods
    per_pod = finding.per_pod
    assert per_pod is not None
    assert (per_pod.cpu_m, per_pod.overhead_cpu_m, per_pod.overhead_pods) == (1000, 250, 5)
    assert per_pod.memory == 256_000_000 and per_pod.overhead_memory == 481280 * 1024
    assert "15 − 10 = 5 DaemonSet pods" in per_pod.derivation
    # every alternative is a D-family size within the 6 vCPUs left; a 4-vCPU node holds 3 of these pods
    assert finding.alternatives
    assert all(a.vcpus <= 6 and a.instance_type.startswith("Standard_D") for a in finding.alternatives)
    four = next(a for a in finding.alternatives if a.instance_type == "Standard_D4ls_v5")
    assert (four.vcpus, four.pods_per_node, four.nodes, four.pods) == (4, 3, 1, 3)
    assert "4 of the 10 pending pods" in change.summary and "6 stay Pending" in change.summary
    assert any("6 pods stay Pending" in d for d in finding.details)


def test_seed_json_keeps_the_contract_keys(log: Any) -> None:
    data = report_to_json(diagnose([str(log.SEED)]))
    assert data["input"]["lines"] == 10 and data["input"]["repaired"] == 1
    finding = data["findings"][0]
    assert finding["quota"] == finding["quota"] | {"name": "cores", "limit": 20, "usage": 14, "required": 16, "new_limit": 30}
    assert finding["evidence"][0]["file"].endswith("seed-karpenter-2023-11-24.log")
    assert data["exit_code"] == 1


def test_hand_built_frame_of_the_seed_gives_the_same_numbers(frame_of: Any, log: Any) -> None:
    t = datetime(2023, 11, 24, 15, 17, 48, tzinfo=UTC)
    message = log.SEED.read_text(encoding="utf-8").splitlines()[-1]
    frame = frame_of([
        {"time": t, "event": "pods.found", "pods": ["default/inflate-74ccd665f4-79x4g"], "pod_count": 10},
        {"time": t, "event": "nodeclaim.created", "nodepool": "general-purpose", "nodeclaim": "general-purpose-pq7gl",
         "requests_cpu_m": 10250, "requests_memory": 2981280 * 1024, "requests_pods": 15},
        {"time": t, "event": "nodeclaim.instance_selected", "nodeclaim": "general-purpose-pq7gl",
         "instance_type": "Standard_D16ls_v5"},
        {"time": t, "level": "ERROR", "message": "Creating virtual machine failed", "raw": message,
         "nodeclaim": "general-purpose-pq7gl"},
    ])
    stats = InputStats(lines=4, parsed=4, repaired=0, unparsed=0, files=["frame.log"])
    report = analyse(frame, stats)
    [finding] = report.findings
    assert finding.category == "regional-vcpu-quota"
    assert finding.quota is not None and finding.quota.new_limit == 30 and finding.region == "westus2"
    assert finding.pod_count == 10 and finding.nodepool == "general-purpose"
