"""The shared model's small pieces: quantities, size names, the error catalog, the log vocabulary, quota."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from provisioner.model import errors as E
from provisioner.model.errors import QuotaExceeded, classify, parse_quota_message
from provisioner.model.instance_type import InstanceType, parse_sku_name, quota_family_name
from provisioner.model.logvocab import EVENTS, format_time, record
from provisioner.model.quantity import (
    QuantityError,
    format_cpu,
    format_memory,
    parse_count,
    parse_cpu,
    parse_memory,
)
from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA, QuotaSnapshot, QuotaUsage, scope_of

# --- quantity ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "millicores"),
    [("250m", 250), ("1", 1000), ("0.5", 500), (2, 2000), (0.1, 100), ("10250m", 10250), ("1.0001", 1001),
     ("100u", 1), ("1e3", 1_000_000), (".5", 500), ("+2", 2000), (" 3 ", 3000)],
)
def test_parse_cpu(text: str | int | float, millicores: int) -> None:
    assert parse_cpu(text) == millicores


@pytest.mark.parametrize(
    ("text", "num_bytes"),
    [("256M", 256_000_000), ("2981280Ki", 2981280 * 1024), ("1Gi", 2**30), ("1.5Gi", 3 * 2**29),
     ("128974848", 128974848), ("129e6", 129_000_000), ("1k", 1000), ("1E", 10**18), ("1Ei", 2**60),
     ("0.5", 1), (1024, 1024)],
)
def test_parse_memory(text: str | int, num_bytes: int) -> None:
    assert parse_memory(text) == num_bytes


@pytest.mark.parametrize("bad", ["", "abc", "1 Gi", "1GB", "1.2.3", "--1", "Gi", "1mi"])
def test_invalid_quantities_raise_naming_the_value(bad: str) -> None:
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_memory(bad)


def test_negatives_and_bools_are_refused() -> None:
    with pytest.raises(QuantityError, match="negative cpu"):
        parse_cpu("-1")
    with pytest.raises(QuantityError, match="negative memory"):
        parse_memory("-1Gi")
    with pytest.raises(QuantityError, match="negative count"):
        parse_count(-3)
    with pytest.raises(QuantityError):
        parse_cpu(True)


def test_parse_count_and_formatting() -> None:
    assert parse_count("15") == 15
    assert parse_count(2.1) == 3
    assert format_cpu(1000) == "1" and format_cpu(10250) == "10250m" and format_cpu(0) == "0"
    assert format_memory(2981280 * 1024) == "2981280Ki"
    assert format_memory(2**30) == "1Gi" and format_memory(3 * 2**29) == "1536Mi"
    assert format_memory(1000) == "1000" and format_memory(0) == "0"


@given(st.integers(min_value=0, max_value=10**9))
def test_cpu_round_trip(millicores: int) -> None:
    assert parse_cpu(format_cpu(millicores)) == millicores


@given(st.integers(min_value=0, max_value=2**62))
def test_memory_round_trip(num_bytes: int) -> None:
    assert parse_memory(format_memory(num_bytes)) == num_bytes


# --- instance types -----------------------------------------------------------------------------


def test_parse_sku_name_parts() -> None:
    d16 = parse_sku_name("Standard_D16ls_v5")
    assert d16 is not None
    assert (d16.family, d16.size_number, d16.features, d16.version) == ("D", 16, "ls", 5)
    assert d16.series == "Dls_v5" and d16.family_letter == "D"
    d14 = parse_sku_name("Standard_D14_v2")
    assert d14 is not None and (d14.size_number, d14.features, d14.version, d14.series) == (14, "", 2, "D_v2")
    ds = parse_sku_name("Standard_DS14-4_v2")
    assert ds is not None and (ds.family, ds.size_number, ds.family_letter) == ("DS", 14, "D")
    b = parse_sku_name("Standard_B2ms")
    assert b is not None and (b.version, b.features) == (1, "ms")
    gpu = parse_sku_name("Standard_NC24ads_A100_v4")
    assert gpu is not None and (gpu.family, gpu.accelerator, gpu.version) == ("NC", "A100", 4)
    assert parse_sku_name("  Standard_D2s_v5 ") is not None
    assert parse_sku_name("Basic_A1") is not None


@pytest.mark.parametrize("bad", ["", "D2s_v5", "Standard_", "standard_d2s_v5", "Standard_2s_v5", "Premium_LRS"])
def test_parse_sku_name_refuses_non_sizes(bad: str) -> None:
    assert parse_sku_name(bad) is None


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Standard_D16ls_v5", "standardDLSv5Family"),
        ("Standard_D14_v2", "standardDv2Family"),
        ("Standard_DS14_v2", "standardDSv2Family"),
        ("Standard_D4s_v3", "standardDSv3Family"),
        ("Standard_D8ds_v4", "standardDDSv4Family"),
        ("Standard_D2as_v5", "standardDASv5Family"),
        ("Standard_D4ps_v5", "standardDPSv5Family"),
        ("Standard_F8s_v2", "standardFSv2Family"),
        ("Standard_E2s_v5", "standardESv5Family"),
        ("Standard_B2ms", "standardBSFamily"),
        ("Standard_B1ls", "standardBSFamily"),
        ("Standard_B2ts_v2", "standardBsv2Family"),
        ("Standard_B4als_v2", "standardBasv2Family"),
        ("Standard_B2pls_v2", "standardBpsv2Family"),
        ("Standard_D4s_v6", "StandardDsv6Family"),
        ("Standard_D4lds_v6", "StandardDldsv6Family"),
        ("Standard_D4as_v6", "standardDav6Family"),
        ("Standard_D4als_v6", "standardDalv6Family"),
        ("Standard_D4alds_v6", "standardDaldv6Family"),
        ("Standard_E4s_v6", "StandardEsv6Family"),
        ("Standard_F4als_v6", "StandardFalsv6Family"),
    ],
)
def test_quota_family_name_matches_the_usage_api(name: str, family: str) -> None:
    assert quota_family_name(name) == family


def test_quota_family_name_of_a_non_size() -> None:
    assert quota_family_name("Premium_LRS") is None


def test_instance_type_properties_and_labels() -> None:
    it = InstanceType(name="Standard_D16ls_v5", vcpus=16, memory_mib=32768, family="standardDLSv5Family",
                      price_on_demand=0.68, price_spot=0.102)
    assert it.sku_family == "D" and it.series == "Dls_v5" and it.version == 5
    assert it.memory_bytes == 32 * 2**30 and it.millicores == 16000
    assert it.price("on-demand") == 0.68 and it.price("spot") == 0.102
    labels = it.labels()
    assert labels["karpenter.azure.com/sku-family"] == "D"
    assert labels["karpenter.azure.com/sku-cpu"] == "16"
    assert labels["karpenter.azure.com/sku-memory"] == "32768"
    assert labels["karpenter.azure.com/sku-series"] == "Dls_v5"
    assert labels["karpenter.azure.com/sku-version"] == "5"
    assert labels["kubernetes.io/arch"] == "amd64"
    assert "karpenter.azure.com/sku-gpu-count" not in labels
    odd = InstanceType(name="weird", vcpus=1, memory_mib=1, family="", gpu_count=1, price_spot=None)
    assert odd.sku is None and odd.sku_family == "" and odd.series == "" and odd.version == 1
    assert odd.price("spot") is None
    assert odd.labels()["karpenter.azure.com/sku-gpu-count"] == "1"
    assert "karpenter.azure.com/sku-series" not in odd.labels()


# --- errors: every message of the Azure error catalog --------------------------------------------

QUOTA_REGIONAL = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
    "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for "
    "Quota increase at xxxxx by specifying parameters listed in the ‘Details’ section for deployment to "
    "succeed. Please read more about quota limits at "
    "https://docs.microsoft.com/en-us/azure/azure-supportability/regional-quota-requests"
)
QUOTA_FAMILY = (
    "Operation could not be completed as it results in exceeding approved standardDASv5Family Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: eastus, Current Limit: 100, "
    "Current Usage: 96, Additional Required: 64, (Minimum) New Limit Required: 160. Submit a request for "
    "Quota increase at https://aka.ms/ProdportalCRP by specifying parameters listed in the ‘Details’ section "
    "for deployment to succeed. Please read more about quota limits at "
    "https://docs.microsoft.com/en-us/azure/azure-supportability/per-vm-quota-requests"
)
QUOTA_SPOT = (
    "Operation could not be completed as it results in exceeding approved LowPriorityCores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 100, "
    "Current Usage: 100, Additional Required: 8, (Minimum) New Limit Required: 108. Submit a request for "
    "Quota increase at https://aka.ms/ProdportalCRP by specifying parameters listed in the ‘Details’ section "
    "for deployment to succeed. Please read more about quota limits at "
    "https://docs.microsoft.com/en-us/azure/azure-supportability/low-priority-quota"
)
QUOTA_LEGACY = (
    "Operation results in exceeding quota limits of Core. Maximum allowed: 10, Current in use: 10, "
    "Additional requested: 2. Please read more about quota increase at http://aka.ms/corequotaincrease."
)
SKU_NEW = (
    "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: Standard_B2s' "
    "is currently not available in location 'eastus'. Please try another size or deploy to a different "
    "location or different zone. See https://aka.ms/azureskunotavailable for details."
)
SKU_OLD = (
    "The requested size for resource '/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Compute/"
    "virtualMachines/vm1' is currently not available in location 'brazilsouth' zones '' for subscription "
    "'0000'. Please try another size or deploy to a different location or zones. "
    "See https://aka.ms/azureskunotavailable for details."
)
OVERCONSTRAINED = (
    "Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too "
    "restrictive. Please remove some constraints and try again. Constraints applied are:\n"
    " - Networking Constraints (such as Accelerated Networking or IPv6)\n - VM Size\n"
)
OVERCONSTRAINED_ZONAL = (
    "Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too "
    "restrictive. Please remove some constraints and try again. Constraints applied are:\n"
    " - Availability Zone\n - Networking Constraints (such as Accelerated Networking or IPv6)\n - VM Size\n"
)


def test_regional_quota_message_of_the_founding_scenario() -> None:
    err = classify("OperationNotAllowed", QUOTA_REGIONAL, 409)
    assert isinstance(err, E.QuotaExceeded)
    assert (err.scope, err.quota, err.region) == ("regional", "cores", "westus2")
    assert (err.limit, err.usage, err.required, err.new_limit, err.headroom) == (20, 14, 16, 30, 6)
    assert err.category == "regional-vcpu-quota"
    assert err.status == 409 and err.code == "OperationNotAllowed" and err.message == QUOTA_REGIONAL
    assert str(err).startswith("(OperationNotAllowed) Operation could not be completed")


def test_family_quota_message() -> None:
    err = classify("OperationNotAllowed", QUOTA_FAMILY, 409)
    assert isinstance(err, E.QuotaExceeded)
    assert (err.scope, err.quota, err.region) == ("family", "standardDASv5Family", "eastus")
    assert (err.limit, err.usage, err.required, err.new_limit, err.headroom) == (100, 96, 64, 160, 4)
    assert err.category == "family-vcpu-quota"


def test_spot_quota_message() -> None:
    err = classify("OperationNotAllowed", QUOTA_SPOT, 409)
    assert isinstance(err, E.QuotaExceeded)
    assert (err.scope, err.quota, err.limit, err.usage, err.required, err.new_limit) == (
        "spot", "lowPriorityCores", 100, 100, 8, 108)
    assert err.category == "spot-vcpu-quota" and err.headroom == 0


def test_legacy_quota_message() -> None:
    err = classify("OperationNotAllowed", QUOTA_LEGACY, 409)
    assert isinstance(err, E.QuotaExceeded)
    assert (err.scope, err.quota, err.limit, err.usage, err.required, err.new_limit) == ("regional", "cores", 10, 10, 2, 12)
    assert err.region == ""


def test_quota_wording_without_code_is_still_recognised() -> None:
    err = classify("", QUOTA_REGIONAL)
    assert isinstance(err, E.QuotaExceeded) and err.limit == 20
    assert parse_quota_message("nothing to see") is None


def test_operation_not_allowed_without_quota_numbers_is_not_a_quota_error() -> None:
    err = classify("OperationNotAllowed", "Operation 'start' is not allowed since the VM is marked for deletion.", 409)
    assert not isinstance(err, E.QuotaExceeded)
    assert isinstance(err, E.UnknownCloudError) and err.category == "unknown-error"


def test_sku_not_available_current_wording() -> None:
    err = classify("SkuNotAvailable", SKU_NEW, 409)
    assert isinstance(err, E.SkuNotAvailable)
    assert (err.sku, err.region, err.zones, err.category) == ("Standard_B2s", "eastus", "", "sku-not-available")


def test_sku_not_available_older_wording_names_no_size() -> None:
    err = classify("SkuNotAvailable", SKU_OLD, 409)
    assert isinstance(err, E.SkuNotAvailable)
    assert (err.sku, err.region, err.zones) == ("", "brazilsouth", "")


def test_sku_not_available_with_a_zone() -> None:
    message = SKU_OLD.replace("zones ''", "zones '3'").replace("The requested size", "The requested size 'Standard_D4as_v5'")
    err = classify("SkuNotAvailable", message, 409)
    assert isinstance(err, E.SkuNotAvailable) and err.zones == "3" and err.sku == "Standard_D4as_v5"


def test_allocation_failures() -> None:
    regional = classify("AllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested "
                        "VM size in this region. Read more about improving likelihood of allocation success at "
                        "http://aka.ms/allocation-guidance", 200)
    assert type(regional) is E.AllocationFailed and regional.category == "allocation-failed"
    zonal = classify("ZonalAllocationFailed", "Allocation failed. We do not have sufficient capacity for the "
                     "requested VM size in this zone. Read more about improving likelihood of allocation success at "
                     "http://aka.ms/allocation-guidance", 200)
    assert isinstance(zonal, E.ZonalAllocationFailed) and isinstance(zonal, E.AllocationFailed)
    assert zonal.category == "zonal-allocation-failed"


def test_overconstrained_allocation() -> None:
    plain = classify("OverconstrainedAllocationRequest", OVERCONSTRAINED, 200)
    assert isinstance(plain, E.OverconstrainedAllocation) and not plain.zonal
    zonal = classify("OverconstrainedZonalAllocationRequest", OVERCONSTRAINED_ZONAL, 200)
    assert isinstance(zonal, E.OverconstrainedAllocation) and zonal.zonal
    assert zonal.category == "overconstrained-allocation"


def test_subnet_full_nic_message() -> None:
    err = classify("SubnetIsFull", "Subnet /subscriptions/0000/resourceGroups/rg/providers/Microsoft.Network/"
                   "virtualNetworks/vnet/subnets/one with address prefix 10.0.0.0/20 does not have enough capacity "
                   "for 1 IP addresses", 400)
    assert isinstance(err, E.SubnetFull) and err.category == "subnet-full"
    assert err.subnet.endswith("/subnets/one") and err.prefix == "10.0.0.0/20"


def test_insufficient_subnet_size_aks_message() -> None:
    err = classify("InsufficientSubnetSize", "Pre-allocated IPs 1280 exceeds IPs available 1024 in Subnet Cidr "
                   "10.240.100.0/22, Subnet Name subnet1. http://aka.ms/aks/insufficientsubnetsize", 400)
    assert isinstance(err, E.SubnetFull)
    assert (err.subnet, err.prefix) == ("subnet1", "10.240.100.0/22")


def test_public_ip_limit() -> None:
    err = classify("PublicIPCountLimitReached",
                   "Cannot create more than 20 public IP addresses for this subscription in this region.", 400)
    assert isinstance(err, E.PublicIPLimit) and err.limit == 20 and err.category == "public-ip-limit"


def test_nic_reserved() -> None:
    err = classify("NicReservedForAnotherVm", "Nic(s) in request is reserved for another Virtual Machine for 180 "
                   "seconds. Please provide another nic(s) or retry after 180 seconds. Reserved VM: /subscriptions/"
                   "0000/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1", 400)
    assert isinstance(err, E.NicReserved) and err.retry_after == 180 and err.category == "nic-reserved"


def test_throttling_429_too_many_requests_with_header_value() -> None:
    err = classify("OperationNotAllowed", "The server rejected the request because too many requests have been "
                   "received for this subscription.", 429, retry_after=1200)
    assert isinstance(err, E.Throttled) and err.retry_after == 1200 and err.category == "throttled"


def test_throttling_backend_storage_limit_reads_seconds_from_the_text() -> None:
    err = classify("SubscriptionRequestsThrottled", "Number of requests for subscription '0000' and operation "
                   "'PUT/SUBSCRIPTIONS/RESOURCEGROUPS/PROVIDERS/MICROSOFT.COMPUTE/VIRTUALMACHINES' exceeded the "
                   "backend storage limit. Please try again after '6' seconds.", 429)
    assert isinstance(err, E.Throttled) and err.retry_after == 6


def test_authorization_failed() -> None:
    err = classify("AuthorizationFailed", "The client 'abc' with object id 'abc' does not have authorization to "
                   "perform action 'Microsoft.Compute/virtualMachines/write' over scope '/subscriptions/0000/"
                   "resourceGroups/rg' or the scope is invalid. If access was recently granted, please refresh your "
                   "credentials.", 403)
    assert isinstance(err, E.AuthorizationFailed) and err.category == "authorization-failed"
    assert err.action == "Microsoft.Compute/virtualMachines/write" and err.scope == "/subscriptions/0000/resourceGroups/rg"
    assert isinstance(classify("Forbidden", "nope", 403), E.AuthorizationFailed)


def test_platform_image_not_found() -> None:
    err = classify("PlatformImageNotFound", "The platform image 'Canonical:ubuntu:22_04-lts:latest' is not "
                   "available. Verify that all fields in the storage profile are correct.", 404)
    assert isinstance(err, E.ImageNotFound) and err.image == "Canonical:ubuntu:22_04-lts:latest"
    assert err.category == "image-not-found"


def test_invalid_vm_size_both_wordings() -> None:
    err = classify("InvalidParameter", "The value B1ls provided for the VM size is not valid. The valid sizes are: "
                   "Standard_B1s.", 400)
    assert isinstance(err, E.InvalidVmSize) and err.sku == "B1ls" and err.category == "invalid-vm-size"
    err = classify("VMSizeNotSupported", "Virtual Machine size: 'Standard_NC6' is not supported for subscription "
                   "0000 in location 'westus'.", 400)
    assert isinstance(err, E.InvalidVmSize) and err.sku == "Standard_NC6"


def test_template_deployment_and_unknown_codes_stay_verbatim() -> None:
    message = "The template deployment 'dep' is not valid according to the validation procedure."
    err = classify("InvalidTemplateDeployment", message, 400)
    assert type(err) is E.UnknownCloudError
    assert (err.code, err.message, err.status) == ("InvalidTemplateDeployment", message, 400)
    assert str(classify("", "bare")) == "bare"


def test_every_error_category_is_a_diagnose_category() -> None:
    from diagnose.findings import CATEGORIES

    static = [c.category for c in (E.CloudError, E.SkuNotAvailable, E.AllocationFailed, E.ZonalAllocationFailed,
                                   E.OverconstrainedAllocation, E.SubnetFull, E.PublicIPLimit, E.NicReserved,
                                   E.Throttled, E.AuthorizationFailed, E.ImageNotFound, E.InvalidVmSize,
                                   E.UnknownCloudError)]
    quota = [classify("OperationNotAllowed", m).category for m in (QUOTA_REGIONAL, QUOTA_FAMILY, QUOTA_SPOT)]
    assert set(static + quota) <= set(CATEGORIES)


def test_input_and_config_errors() -> None:
    err = E.ConfigError("KARP_REGION", "must not be empty")
    assert str(err) == "setting KARP_REGION: must not be empty" and err.setting == "KARP_REGION"
    assert isinstance(err, E.KarpError) and isinstance(E.InputError("x"), E.KarpError)


# --- log vocabulary ----------------------------------------------------------------------------


def test_format_time_is_utc_milliseconds_z() -> None:
    moment = datetime(2026, 11, 29, 18, 0, 0, 123456, tzinfo=UTC)
    assert format_time(moment) == "2026-11-29T18:00:00.123Z"
    assert format_time(moment.replace(tzinfo=None)) == "2026-11-29T18:00:00.123Z"
    plus_one = moment.astimezone(timezone(timedelta(hours=1)))
    assert format_time(plus_one) == "2026-11-29T18:00:00.123Z"


def test_record_for_a_nodeclaim_event_has_karpenters_shape() -> None:
    now = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
    line = record("nodeclaim.launch_failed", now, commit="karp-0.1.0", name="general-purpose-pq7gl",
                  reconcile_id="r1", error="(OperationNotAllowed) …", **{"error.code": "OperationNotAllowed"})
    assert line["level"] == "ERROR" and line["logger"] == "controller"
    assert line["message"] == "failed launching nodeclaim" and line["event"] == "nodeclaim.launch_failed"
    assert line["controller"] == "nodeclaim.lifecycle" and line["controllerGroup"] == "karpenter.sh"
    assert line["controllerKind"] == "NodeClaim" and line["NodeClaim"] == {"name": "general-purpose-pq7gl"}
    assert line["name"] == "general-purpose-pq7gl" and line["namespace"] == "" and line["reconcileID"] == "r1"
    assert line["error.code"] == "OperationNotAllowed" and line["time"] == "2026-11-29T18:00:00.000Z"


def test_record_for_a_kindless_event_and_a_message_override() -> None:
    now = datetime(2026, 11, 29, tzinfo=UTC)
    line = record("pods.found", now, message="found provisionable pod(s)", Pods="default/inflate-1")
    assert "controllerKind" not in line and "name" not in line
    assert line["Pods"] == "default/inflate-1" and line["level"] == "INFO"
    selected = record("nodeclaim.instance_selected", now, message="selected instance type Standard_D16ls_v5",
                      name="n", namespace="ns")
    assert selected["message"].startswith(EVENTS["nodeclaim.instance_selected"].message)
    assert selected["NodeClaim"] == {"name": "n", "namespace": "ns"}
    with pytest.raises(KeyError):
        record("no.such.event", now)


def test_event_vocabulary_is_consistent() -> None:
    assert all(key == kind.key for key, kind in EVENTS.items())
    assert {kind.level for kind in EVENTS.values()} <= {"INFO", "DEBUG", "WARN", "ERROR"}
    assert {kind.kind for kind in EVENTS.values()} <= {"", "NodeClaim", "NodePool", "Pod", "Node"}
    assert len({kind.message for kind in EVENTS.values()}) == len(EVENTS)


# --- quota -------------------------------------------------------------------------------------


def test_quota_usage_scope_and_headroom() -> None:
    regional = QuotaUsage(REGIONAL_QUOTA, limit=20, usage=14, localized_name="Total Regional vCPUs")
    assert regional.scope == "regional" and regional.headroom == 6
    assert QuotaUsage(SPOT_QUOTA, 10, 12).headroom == 0
    assert QuotaUsage(SPOT_QUOTA, 10, 12).scope == "spot"
    assert scope_of("standardDLSv5Family") == "family"


def test_quota_snapshot_lookup() -> None:
    snap = QuotaSnapshot(
        region="westus2",
        read_at=datetime(2026, 11, 29, tzinfo=UTC),
        source="log",
        items={"cores": QuotaUsage("cores", 20, 14), "standardDLSv5Family": QuotaUsage("standardDLSv5Family", 10, 0)},
    )
    assert snap.headroom("cores") == 6 and snap.headroom("standardDLSv5Family") == 10
    assert snap.get("lowPriorityCores") is None and snap.headroom("lowPriorityCores") is None
    assert QuotaSnapshot("eastus", datetime(2026, 1, 1, tzinfo=UTC), "flags").items == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("regional vCPU quota cores in westus2: limit 20, usage 20, 0 left, 8 more needed; a limit of 28 would place them",
         ("regional-vcpu-quota", "cores", 20, 20, 8, 28, "westus2")),
        ("16 pod(s) cannot be placed: regional vCPU quota cores in westus2: limit 20, usage 20 (+4 being created), 0 left, "
         "18 more needed; a limit of 38 would place them", ("regional-vcpu-quota", "cores", 20, 20, 18, 38, "westus2")),
        ("NodeClaim a refused by Azure: family vCPU quota standardDLSv5Family in eastus: limit 10, usage 8, 16 more "
         "needed for Standard_D16ls_v5; a limit of 24 would allow it (OperationNotAllowed)",
         ("family-vcpu-quota", "standardDLSv5Family", 10, 8, 16, 24, "eastus")),
        ("spot vCPU quota lowPriorityCores in westus2: limit 4, usage 4, 0 left, 2 more needed; a limit of 6 would place them",
         ("spot-vcpu-quota", "lowPriorityCores", 4, 4, 2, 6, "westus2")),
    ],
)
def test_karp_quota_wording_is_read_back(text: str, expected: tuple[object, ...]) -> None:
    """karp-provisioner's own Events and log lines name blocking quotas in one wording; diagnose reads it back."""
    error = classify("", text)
    assert isinstance(error, QuotaExceeded)
    assert (error.category, error.quota, error.limit, error.usage, error.required, error.new_limit, error.region) == expected


@pytest.mark.parametrize("scope", ["regional", "family", "spot"])
@pytest.mark.parametrize("options", [{}, {"left": 0, "in_flight": 4}, {"size": "Standard_D16ls_v5", "would": "allow it"}])
def test_karp_quota_wording_round_trips(scope: str, options: dict[str, object]) -> None:
    from provisioner.model.errors import describe_quota_block

    name = {"regional": "cores", "family": "standardDLSv5Family", "spot": "lowPriorityCores"}[scope]
    text = describe_quota_block(scope, name, "westus2", 20, 14, 16, 30, **options)  # type: ignore[arg-type]
    error = classify("", f"Failed to schedule pod, {text}")
    assert isinstance(error, QuotaExceeded)
    assert (error.scope, error.quota, error.region, error.limit, error.usage, error.required, error.new_limit) == (
        scope, name, "westus2", 20, 14, 16, 30,
    )
