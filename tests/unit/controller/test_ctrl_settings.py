from __future__ import annotations

import pytest

from provisioner.model.errors import ConfigError
from provisioner.settings import Settings

SUBNET = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n"
ENV = {
    "KARP_CLUSTER_NAME": "karpenter",
    "KARP_SUBSCRIPTION_ID": "00000000-0000-0000-0000-0000000000AB",
    "KARP_RESOURCE_GROUP": "karpenter",
    "KARP_LOCATION": "westus2",
    "KARP_NODE_RESOURCE_GROUP": "MC_karpenter_karpenter_westus2",
    "KARP_SUBNET_ID": SUBNET,
}


def test_ctrl_settings_from_env_and_flags_override() -> None:
    s = Settings.load(flags={"location": "eastus", "batch_idle_seconds": "0.5"}, env={**ENV, "KARP_MODE": "karpenter"})
    assert s.location == "eastus"
    assert s.batch_idle_seconds == 0.5
    assert s.batch_max_seconds == 10.0
    assert s.mode == "karpenter"
    assert s.subscription_id == "00000000-0000-0000-0000-0000000000ab"


@pytest.mark.parametrize(
    ("env", "flags", "named", "says"),
    [
        ({k: v for k, v in ENV.items() if k != "KARP_LOCATION"}, {}, "KARP_LOCATION", "is required"),
        ({**ENV, "KARP_SUBSCRIPTION_ID": "nope"}, {}, "KARP_SUBSCRIPTION_ID", "GUID"),
        (ENV, {"subnet_id": "/subnets/x"}, "--subnet-id", "subnet ARM id"),
        (ENV, {"mode": "fast"}, "--mode", "quota-aware"),
        (ENV, {"batch_idle_seconds": "-1"}, "--batch-idle-seconds", "positive"),
        (ENV, {"azure_endpoint": "http://x"}, "--azure-endpoint", "https://"),
        (ENV, {"kubeconfig": "/no/such/file"}, "--kubeconfig", "does not exist"),
        ({**ENV, "KARP_BATCH_IDLE_SECONDS": "20"}, {}, "KARP_BATCH_IDLE_SECONDS", "must not exceed"),
    ],
)
def test_ctrl_settings_errors_name_the_setting(env: dict[str, str], flags: dict[str, str], named: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        Settings.load(flags=flags, env=env)
    assert info.value.setting == named
    assert says in str(info.value)


def test_ctrl_settings_log_level_accepts_lowercase() -> None:
    assert Settings.load(flags={"log_level": "warning"}, env=ENV).log_level == "WARN"
