"""Request bodies from specs and values from Azure's JSON (no network)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from provisioner.azure.config import AzureConfig
from provisioner.azure.payloads import image_reference, nic_body, nic_info, tags_match, vm_body, vm_info
from provisioner.azure.quota_reader import snapshot_from_usages
from provisioner.model.errors import ConfigError
from provisioner.model.ports import NicSpec, VmSpec


def test_image_references() -> None:
    assert image_reference("/CommunityGalleries/g/images/i/versions/1") == {
        "communityGalleryImageId": "/CommunityGalleries/g/images/i/versions/1"
    }
    assert image_reference("Canonical:ubuntu:22_04-lts:latest") == {
        "publisher": "Canonical", "offer": "ubuntu", "sku": "22_04-lts", "version": "latest"
    }
    assert image_reference("/subscriptions/s/images/x") == {"id": "/subscriptions/s/images/x"}


def test_vm_body_regular_and_spot() -> None:
    spec = VmSpec("aks-a", "Standard_D4s_v5", "/nic", "/img", zone="2", tags={"k": "v"}, custom_data="Y2k=",
                  ssh_public_key="ssh-rsa AAA")
    body = vm_body(spec, "westus2")
    props = body["properties"]
    assert body["zones"] == ["2"] and body["tags"] == {"k": "v"} and body["location"] == "westus2"
    assert props["hardwareProfile"] == {"vmSize": "Standard_D4s_v5"}
    assert props["networkProfile"]["networkInterfaces"][0] == {
        "id": "/nic", "properties": {"primary": True, "deleteOption": "Detach"}
    }
    assert props["osProfile"]["customData"] == "Y2k="
    assert "priority" not in props
    spot = vm_body(VmSpec("aks-b", "Standard_D4s_v5", "/nic", "/img", spot=True), "westus2")
    assert spot["properties"]["priority"] == "Spot" and "zones" not in spot
    assert spot["properties"]["billingProfile"] == {"maxPrice": -1}


def test_nic_round_trip() -> None:
    body = nic_body(NicSpec("aks-a", "/subnet", {"k": "v"}, accelerated_networking=True), "westus2")
    assert body["properties"]["ipConfigurations"][0]["properties"]["subnet"] == {"id": "/subnet"}
    info = nic_info({"id": "/nic", "name": "aks-a", "tags": {"k": "v"}, "properties": {
        "ipConfigurations": [{"properties": {"privateIPAddress": "10.224.0.4"}}], "virtualMachine": {"id": "/vm"}}})
    assert (info.private_ip, info.vm_id, info.tags) == ("10.224.0.4", "/vm", {"k": "v"})


def test_vm_info_from_json() -> None:
    info = vm_info({"id": "/vm", "name": "aks-a", "zones": ["3"], "tags": {"a": "b"}, "properties": {
        "hardwareProfile": {"vmSize": "Standard_D2s_v5"}, "priority": "Spot", "provisioningState": "Creating",
        "timeCreated": "2026-11-29T10:00:00Z"}})
    assert (info.size, info.zone, info.spot, info.provisioning_state) == ("Standard_D2s_v5", "3", True, "Creating")
    assert info.created_at == datetime(2026, 11, 29, 10, tzinfo=UTC)
    assert info.provider_id == "azure:///vm"
    assert tags_match({"a": "b", "c": "d"}, {"a": "b"}) and not tags_match({"a": "x"}, {"a": "b"})


def test_snapshot_keeps_only_vcpu_quotas() -> None:
    usages = [
        {"name": {"value": "availabilitySets"}, "limit": 2500, "currentValue": 1},
        {"name": {"value": "cores", "localizedValue": "Total Regional vCPUs"}, "limit": 20, "currentValue": 14},
        {"name": {"value": "standardDLSv5Family"}, "limit": 100, "currentValue": 0},
        {"name": {"value": "lowPriorityCores"}, "limit": 10, "currentValue": 2},
        {"name": {"value": "virtualMachines"}, "limit": 25000, "currentValue": 3},
    ]
    snapshot = snapshot_from_usages("westus2", usages)
    assert set(snapshot.items) == {"cores", "standardDLSv5Family", "lowPriorityCores"}
    assert snapshot.headroom("cores") == 6 and snapshot.source == "azure"


def test_config_validation_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"azure\.endpoint"):
        AzureConfig("s", "rg", "westus2", endpoint="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match=r"azure\.subscription_id"):
        AzureConfig("", "rg", "westus2")
    config = AzureConfig("s", "rg", "westus2", credential=object())
    assert "credential" not in repr(config)
    assert config.quota_scope == "subscriptions/s/providers/Microsoft.Compute/locations/westus2"
