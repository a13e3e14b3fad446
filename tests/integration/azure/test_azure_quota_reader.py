"""read_live_quota (karp-diagnose --azure): a snapshot, or a typed error with a clear message."""

from __future__ import annotations

import socket
from dataclasses import replace
from typing import Any

import pytest
from azure.core.exceptions import ClientAuthenticationError

from provisioner.azure import LiveQuotaSource, read_live_quota
from provisioner.model.errors import AuthorizationFailed, CloudUnavailable, CredentialError
from sim.arm import ArmEmulator


class NoLogin:
    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        raise ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token from the included credentials.")


def test_reads_every_vcpu_quota(fresh: ArmEmulator, config_for: Any) -> None:
    fresh.reset(quotas={"cores": 20, "standardDLSv5Family": 100, "lowPriorityCores": 50}, usages={"cores": 14})
    snapshot = read_live_quota(config_for(fresh))
    assert snapshot.source == "azure" and snapshot.region == "westus2"
    assert snapshot.read_at.tzinfo is not None
    cores = snapshot.items["cores"]
    assert (cores.limit, cores.usage, cores.headroom) == (20, 14, 6)
    assert snapshot.items["standardDLSv5Family"].limit == 100
    assert snapshot.items["lowPriorityCores"].limit == 50
    assert snapshot.items["standardDLSv5Family"].localized_name == "Standard DLSv5 Family vCPUs"
    assert LiveQuotaSource(config_for(fresh)).read("westus2").items["cores"].usage == 14


def test_authorization_failed_is_typed(fresh: ArmEmulator, config_for: Any) -> None:
    fresh.deny("get_usages")
    with pytest.raises(AuthorizationFailed) as caught:
        read_live_quota(config_for(fresh))
    assert caught.value.action == "Microsoft.Compute/locations/usages/read"
    assert "does not have authorization" in str(caught.value)


def test_missing_credential_is_a_clear_error(fresh: ArmEmulator, config_for: Any) -> None:
    with pytest.raises(CredentialError) as caught:
        read_live_quota(replace(config_for(fresh), credential=NoLogin()))
    assert "az login" in caught.value.message and "workload identity" in caught.value.message
    assert caught.value.category == "authorization-failed"
    assert list(fresh.records("get_usages")) == []  # nothing was sent without a token


def test_nothing_listening_is_unavailable(fresh: ArmEmulator, config_for: Any) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = replace(config_for(fresh, max_retries=0), endpoint=f"https://127.0.0.1:{port}")
    with pytest.raises(CloudUnavailable) as caught:
        read_live_quota(config)
    assert caught.value.code == "ConnectionError"
    assert "did not answer" in caught.value.message


def test_tokens_never_reach_the_logs(fresh: ArmEmulator, config_for: Any, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="azure"):
        read_live_quota(config_for(fresh))
    assert "offline-token-never-logged" not in caplog.text
    assert "'Authorization': 'REDACTED'" in caplog.text  # the HTTP logging ran, with the header redacted


def test_emulator_config_needs_no_credential(fresh: ArmEmulator) -> None:
    from provisioner.azure import AzureConfig, StaticCredential

    config = AzureConfig.for_emulator(fresh.endpoint.as_dict())
    assert isinstance(config.credential, StaticCredential)
    assert "karp-offline" not in repr(config.credential)
    assert read_live_quota(config).items["cores"].limit == 20
