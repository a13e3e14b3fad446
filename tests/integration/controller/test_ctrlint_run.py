"""``karp-provisioner run``'s replica, assembled from Settings, against both emulators (offline credential)."""

from __future__ import annotations

from typing import Any

from provisioner.azure.credentials import StaticCredential
from provisioner.controller.service import assemble_service
from provisioner.settings import Settings
from sim.scenarios.harness import Stage, StageTimings


def test_ctrlint_run_assembly_places_the_founding_pods(tmp_path: Any) -> None:
    with Stage(quotas={"cores": 20}, usages={"cores": 14}, provisioner=False,
               timings=StageTimings(vm_create=0.1, node_ready=0.1)) as stage:
        arm = stage.arm.endpoint
        log = tmp_path / "run.log"
        settings = Settings.from_sources(
            cluster_name="karpenter", subscription_id=arm.subscription, resource_group="karpenter",
            location=arm.location, node_resource_group=arm.resource_group, subnet_id=arm.subnet_id,
            azure_endpoint=arm.endpoint, azure_ca_file=arm.ca_cert, kubeconfig=stage.kube.kubeconfig,
            batch_idle_seconds=0.3, batch_max_seconds=3, log_file=str(log), log_level="DEBUG",
            metrics_port=0, health_port=0, lease_namespace="karpenter",
        )
        running = assemble_service(settings, credential=StaticCredential())
        running.start()
        try:
            stage.scale(10)
            assert stage.wait_for(lambda: stage.counts() == (4, 6), timeout=30), stage.counts()
            assert stage.wait_for(lambda: log.read_text().count('"event":"nodeclaim.initialized"') == 2, timeout=10)
        finally:
            running.stop()
        text = log.read_text()
        assert '"event":"leader.acquired"' in text
        assert '"event":"nodeclaim.initialized"' in text
        assert '"event":"quota.blocked"' in text and '"event":"nodeclaim.launch_failed"' not in text
        lease = stage.kube.get("leases", "karp-leader-election", "karpenter")
        assert lease is not None
