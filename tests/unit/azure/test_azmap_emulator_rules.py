"""The emulator's quota ledger and fault plan, without sockets: Azure's arithmetic and wording."""

from __future__ import annotations

import pytest

from provisioner.model.errors import QuotaExceeded, classify
from sim.arm.faults import FaultPlan, FaultRule, plan_from_data
from sim.arm.ledger import QuotaLedger, VcpuCharge, localized_name
from sim.arm.messages import ArmFault

SUB = "sub-1"


def ledger(**limits: int) -> QuotaLedger:
    return QuotaLedger(SUB, "westus2", ["standardDLSv5Family", "standardDSv5Family"], limits, {"cores": 14})


def refusal(book: QuotaLedger, charge: VcpuCharge, held: list[VcpuCharge] | None = None) -> QuotaExceeded:
    with pytest.raises(ArmFault) as caught:
        book.check(charge, held or [])
    fault = caught.value
    assert (fault.status, fault.code, fault.headers) == (409, "OperationNotAllowed", {})  # never Retry-After on quota
    error = classify(fault.code, fault.message, fault.status)
    assert isinstance(error, QuotaExceeded)
    return error


def test_regional_numbers_follow_usage() -> None:
    book = ledger(cores=20)
    book.check(VcpuCharge(6, "standardDSv5Family", False), [])  # 14 + 6 = 20 fits exactly
    error = refusal(book, VcpuCharge(16, "standardDLSv5Family", False))
    assert (error.limit, error.usage, error.required, error.new_limit) == (20, 14, 16, 30)
    held = [VcpuCharge(4, "standardDSv5Family", False)]
    error = refusal(book, VcpuCharge(4, "standardDSv5Family", False), held)
    assert (error.usage, error.new_limit) == (18, 22)


def test_family_before_regional_and_spot_alone() -> None:
    book = ledger(cores=20, standardDLSv5Family=8, lowPriorityCores=4)
    family = refusal(book, VcpuCharge(16, "standardDLSv5Family", False))  # both are exceeded: family is reported
    assert (family.scope, family.quota, family.limit) == ("family", "standardDLSv5Family", 8)
    spot = refusal(book, VcpuCharge(8, "standardDLSv5Family", True))
    assert (spot.scope, spot.limit, spot.usage, spot.required) == ("spot", 4, 0, 8)
    book.check(VcpuCharge(4, "standardDLSv5Family", True), [])  # spot ignores cores and the family


def test_usage_counts_by_scope() -> None:
    book = ledger()
    usage = book.usage([VcpuCharge(4, "standardDSv5Family", False), VcpuCharge(2, "standardDSv5Family", True)])
    assert (usage["cores"], usage["standardDSv5Family"], usage["lowPriorityCores"]) == (18, 4, 2)
    assert book.names()[0] == "cores" and book.names()[-1] == "lowPriorityCores"


def test_quota_requests_settle_after_the_delay() -> None:
    book = QuotaLedger(SUB, "westus2", [], {"cores": 20}, ceiling=100, request_delay_s=10)
    granted = book.request_increase("cores", 30, now=0.0)
    rejected = book.request_increase("cores", 500, now=0.0)
    book.settle(5.0)
    assert (granted.state, book.limits["cores"]) == ("InProgress", 20)
    book.settle(10.0)
    assert (granted.state, book.limits["cores"]) == ("Succeeded", 30)
    assert rejected.state == "Failed" and "above 100" in rejected.message


def test_localized_names() -> None:
    assert localized_name("cores") == "Total Regional vCPUs"
    assert localized_name("standardDLSv5Family") == "Standard DLSv5 Family vCPUs"
    assert localized_name("StandardDdsv6Family") == "Standard Ddsv6 Family vCPUs"


def test_fault_rules_match_count_and_validate() -> None:
    plan = FaultPlan([FaultRule("sku_not_available", op="create_vm", sku="Standard_D4s_v5", zone="2", count=1)])
    assert plan.draw("create_vm", "standard_d4s_v5", "1") is None  # other zone
    assert plan.draw("get_usages") is None
    assert plan.draw("create_vm", "Standard_D4s_v5", "2") is not None
    assert plan.draw("create_vm", "Standard_D4s_v5", "2") is None  # count spent
    assert plan.fired() == [1]
    with pytest.raises(ValueError, match=r"rate 2\.0 is not between 0 and 1"):
        plan_from_data([{"kind": "throttle", "rate": 2}])
    with pytest.raises(ValueError, match="unknown field"):
        plan_from_data([{"kind": "throttle", "colour": "red"}])
    with pytest.raises(ValueError, match="op 'create_disk'"):
        plan_from_data([{"kind": "drop", "op": "create_disk"}])
