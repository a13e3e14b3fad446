"""Cloud errors read out of their wrappings."""

from __future__ import annotations

from diagnose.ingest.error_text import analyse

REGIONAL = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. Additional "
    "details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, Current Usage: 14, "
    "Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for Quota increase at xxxxx."
)


def test_python_sdk_form() -> None:
    facts = analyse(f"(OperationNotAllowed) {REGIONAL}\nCode: OperationNotAllowed\nMessage: {REGIONAL}")
    assert (facts.code, facts.category, facts.quota_limit, facts.quota_new_limit, facts.region) == (
        "OperationNotAllowed", "regional-vcpu-quota", 20, 30, "westus2",
    )
    assert facts.message == REGIONAL


def test_autorest_form() -> None:
    text = (
        "compute.VirtualMachinesClient#CreateOrUpdate: Failure sending request: StatusCode=409 -- Original Error: "
        'Code="SkuNotAvailable" Message="The requested size for resource \'/subscriptions/x\' is currently not '
        "available in location 'brazilsouth' zones '' for subscription 'x'.\""
    )
    facts = analyse(text)
    assert (facts.code, facts.category, facts.region) == ("SkuNotAvailable", "sku-not-available", "brazilsouth")


def test_legacy_quota_wording_without_code() -> None:
    facts = analyse(
        "Operation results in exceeding quota limits of Core. Maximum allowed: 10, Current in use: 10, "
        "Additional requested: 2. Please read more about quota increase at http://aka.ms/corequotaincrease."
    )
    assert (facts.category, facts.quota_limit, facts.quota_usage, facts.quota_required, facts.quota_new_limit) == (
        "regional-vcpu-quota", 10, 10, 2, 12,
    )


def test_minimum_in_quota_text_is_not_a_code() -> None:
    assert analyse(REGIONAL).code is None
    assert analyse(REGIONAL).category == "regional-vcpu-quota"


def test_throttling_and_unknown_codes() -> None:
    throttled = analyse(
        "(SubscriptionRequestsThrottled) Number of requests for subscription 'x' and operation 'y' exceeded the "
        "backend storage limit. Please try again after '6' seconds."
    )
    assert throttled.category == "throttled"
    unknown = analyse("(SomethingNew) A brand new failure")
    assert (unknown.code, unknown.category, unknown.message) == ("SomethingNew", "unknown-error", "A brand new failure")


def test_generic_karpenter_reasons() -> None:
    assert analyse("launch timeout exceeded").category == "registration-timeout"
    assert analyse("no instance type satisfied resources {cpu: 64}").category == "no-compatible-instance-types"
    plain = analyse("Operation cannot be fulfilled on nodeclaims.karpenter.sh: the object has been modified")
    assert (plain.code, plain.category) == (None, None)
