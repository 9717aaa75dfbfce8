"""deploy/kubernetes/: every manifest validates, offline, against the Kubernetes API's
JSON schemas (kubernetes-validate, strict: no unknown field) and the ServiceMonitor
against the Prometheus Operator's CRD schema (tests/fixtures/crds/); the pieces are
wired to each other and to what plumb reads; the init container's clone script works."""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from ruamel.yaml import YAML

from intent.models import StateConfig
from intent.serve import ServeConfig
from reconciler.state.location import is_postgres_url
from tests.deploy.tools import DEPLOY, ROOT
from tests.serve.servefleet import git

KUBE = DEPLOY / "kubernetes"
CRD = ROOT / "tests" / "fixtures" / "crds" / "monitoring.coreos.com_servicemonitors.yaml"
VERSIONS = ("1.28", "1.37")  # the oldest Kubernetes still common, the newest schemas shipped
APP = {"app.kubernetes.io/name": "plumb-serve"}

Doc = dict[str, Any]


def load_all(path: Path) -> list[Doc]:
    return [d for d in YAML(typ="safe").load_all(path.read_text()) if d]


@cache
def kustomization() -> Doc:
    loaded: Doc = YAML(typ="safe").load((KUBE / "kustomization.yaml").read_text())
    return loaded


def documents() -> list[Doc]:
    return [d for name in kustomization()["resources"] for d in load_all(KUBE / name)]


def one(kind: str) -> Doc:
    found = [d for d in documents() if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


def pod_spec() -> Doc:
    spec: Doc = one("Deployment")["spec"]["template"]["spec"]
    return spec


def containers() -> Iterator[Doc]:
    yield from pod_spec()["initContainers"]
    yield from pod_spec()["containers"]


def controller() -> Doc:
    (main,) = pod_spec()["containers"]
    assert isinstance(main, dict)
    return main


def env(container: Doc) -> dict[str, Doc]:
    return {e["name"]: e for e in container.get("env", [])}


def strict(schema: Any) -> Any:
    """The CRD's schema with unknown fields refused, as the API server's strict field
    validation does (an object schema without additionalProperties or
    x-kubernetes-preserve-unknown-fields admits only its properties)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    tightened = {k: strict(v) for k, v in schema.items()}
    open_ended = "additionalProperties" in schema or schema.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if "properties" in schema and not open_ended:
        tightened["additionalProperties"] = False
    return tightened


@cache
def servicemonitor_schema() -> Any:
    (crd,) = load_all(CRD)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return strict(version["schema"]["openAPIV3Schema"])


def validate_servicemonitor(doc: Doc) -> None:
    jsonschema.Draft7Validator(servicemonitor_schema()).validate(doc)


# -- the schemas --------------------------------------------------------------------


def test_the_kustomization_lists_every_manifest() -> None:
    """No manifest in the folder is left out of `kubectl apply -k`, none is missing."""
    on_disk = {p.name for p in KUBE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization()["resources"]) == on_disk


@pytest.mark.parametrize("version", VERSIONS)
def test_the_manifests_validate_against_the_kubernetes_schemas(version: str) -> None:
    """Each built-in kind validates strictly against that Kubernetes version's API."""
    kinds = set()
    for doc in documents():
        if doc["kind"] == "ServiceMonitor":
            continue
        kubernetes_validate.validate(doc, version, strict=True)
        kinds.add(doc["kind"])
    assert {"Deployment", "Service", "Secret", "ConfigMap", "PodDisruptionBudget"} <= kinds


def test_the_servicemonitor_validates_against_the_operator_crd() -> None:
    """The ServiceMonitor fits the monitoring.coreos.com/v1 schema, no unknown field."""
    monitor = one("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    validate_servicemonitor(monitor)


def test_a_misspelt_field_fails_validation() -> None:
    """The checks can fail: an unknown field in a Deployment or a ServiceMonitor."""
    deployment = copy.deepcopy(one("Deployment"))
    main = deployment["spec"]["template"]["spec"]["containers"][0]
    main["livenesProbe"] = main.pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError, match="livenesProbe"):
        kubernetes_validate.validate(deployment, VERSIONS[-1], strict=True)
    monitor = copy.deepcopy(one("ServiceMonitor"))
    monitor["spec"]["endpoints"][0]["intervall"] = "30s"
    with pytest.raises(jsonschema.ValidationError, match="intervall"):
        validate_servicemonitor(monitor)


# -- the wiring ---------------------------------------------------------------------


def test_selectors_reach_the_pods_and_the_port() -> None:
    """Deployment, Service, PodDisruptionBudget and ServiceMonitor select the same pods,
    through the named port the controller listens on."""
    deployment, service = one("Deployment"), one("Service")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert one("PodDisruptionBudget")["spec"]["selector"]["matchLabels"].items() <= (
        pod_labels.items()
    )
    monitor = one("ServiceMonitor")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= (
        service["metadata"]["labels"].items()
    )
    ports = {p["name"]: p for p in controller()["ports"]}
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] in ports
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [service_port["name"]]
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    listen = controller()["command"][controller()["command"].index("--listen") + 1]
    assert listen == f"0.0.0.0:{ports[service_port['targetPort']]['containerPort']}"


def test_two_replicas_lead_through_postgresql() -> None:
    """Two replicas need a shared state with leader election: the Secret's URL is one."""
    assert one("Deployment")["spec"]["replicas"] == 2
    assert is_postgres_url(one("Secret")["stringData"]["state-url"])


def test_secrets_reach_plumb_under_the_names_it_reads() -> None:
    """PLUMB_STATE_URL and PLUMB_WEBHOOK_SECRET, plumb.yaml's defaults, come from keys
    the Secret has; every referenced Secret or ConfigMap key exists or is optional."""
    variables = env(controller())
    state_env = StateConfig.model_fields["url_env"].default
    webhook_env = ServeConfig.model_fields["webhook_secret_env"].default
    for name in (state_env, webhook_env):
        assert "secretKeyRef" in variables[name]["valueFrom"], name
    secrets = {d["metadata"]["name"]: d for d in documents() if d["kind"] == "Secret"}
    maps = {d["metadata"]["name"]: d for d in documents() if d["kind"] == "ConfigMap"}
    for container in containers():
        for var in container.get("env", []):
            source = var.get("valueFrom", {})
            for kind, known, field in (
                ("secretKeyRef", secrets, "stringData"),
                ("configMapKeyRef", maps, "data"),
            ):
                if kind in source and not source[kind].get("optional"):
                    ref = source[kind]
                    assert ref["key"] in known[ref["name"]][field], (container["name"], ref)
        for reference in container.get("envFrom", []):
            ref = reference.get("secretRef") or reference.get("configMapRef")
            assert ref["name"] in secrets or ref.get("optional"), ref
    for volume in pod_spec()["volumes"]:
        if "secret" in volume:
            assert volume["secret"]["secretName"] in secrets or volume["secret"]["optional"]


def test_probes_ask_healthz_and_readyz() -> None:
    """Liveness on /healthz (the process serves), readiness on /readyz (the last turn)."""
    main = controller()
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert main["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}


def test_every_container_is_unprivileged_and_bounded() -> None:
    """Non-root as the image's plumb user, no privilege escalation, no capability, a
    read-only root, and CPU and memory requests and limits."""
    uid = re.search(r"useradd .*--uid (\d+)", (DEPLOY / "Containerfile").read_text())
    assert uid is not None
    pod = pod_spec()["securityContext"]
    assert pod["runAsNonRoot"] and pod["runAsUser"] == int(uid.group(1))
    assert pod["seccompProfile"]["type"] == "RuntimeDefault"
    mounts = {v["name"] for v in pod_spec()["volumes"]}
    for container in containers():
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False, container["name"]
        assert security["readOnlyRootFilesystem"] is True, container["name"]
        assert security["capabilities"]["drop"] == ["ALL"], container["name"]
        for bound in ("requests", "limits"):
            assert {"cpu", "memory"} <= container["resources"][bound].keys(), container["name"]
        assert {m["name"] for m in container["volumeMounts"]} <= mounts
        writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
        assert {"/tmp", "/srv/fleet"} <= writable  # HOME and the clone on a read-only root


def test_the_grace_period_matches_the_systemd_stop_timeout() -> None:
    """Kubernetes waits as long as systemd does for the pass in flight after SIGTERM."""
    unit = (DEPLOY / "plumb-serve.service").read_text()
    stop = re.search(r"^TimeoutStopSec=(\d+)$", unit, re.MULTILINE)
    assert stop is not None
    assert pod_spec()["terminationGracePeriodSeconds"] == int(stop.group(1))


def test_the_controller_serves_the_clone_the_init_container_makes() -> None:
    """The init container clones into the folder the controller's PATH argument names."""
    (clone,) = pod_spec()["initContainers"]
    target = env(clone)["PLUMB_FLEET_DIR"]["value"]
    assert env(controller())["PLUMB_FLEET_DIR"]["value"] == target
    assert controller()["command"][:3] == ["plumb", "serve", "$(PLUMB_FLEET_DIR)"]
    assert '"$PLUMB_FLEET_DIR"' in clone["args"][0]
    assert target.startswith("/srv/fleet/")  # a folder of its own on the volume


def test_the_clone_script_clones_once_and_then_keeps_the_clone(tmp_path: Path) -> None:
    """Run as the init container runs it: a clone of the branch with remote `origin`
    (serve.remote's default); after a container restart the clone is kept as it is."""
    (clone,) = pod_spec()["initContainers"]
    remote = tmp_path / "remote.git"
    author = tmp_path / "author"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(tmp_path, "init", "-q", "-b", "main", str(author))
    (author / "plumb.yaml").write_text("fleet: orion\n")
    git(author, "add", "-A")
    git(author, "commit", "-q", "-m", "orion")
    git(author, "push", "-q", str(remote), "main")
    target = tmp_path / "fleet" / "repo"
    (tmp_path / "fleet").mkdir()
    run_env = {
        **os.environ,
        "PLUMB_FLEET_DIR": str(target),
        "PLUMB_FLEET_REPO": str(remote),
        "PLUMB_FLEET_BRANCH": "main",
        "HOME": str(tmp_path),
    }
    script = [*clone["command"], clone["args"][0]]
    first = subprocess.run(script, env=run_env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert git(target, "rev-parse", "HEAD") == git(author, "rev-parse", "HEAD")
    assert git(target, "remote") == ServeConfig.model_fields["remote"].default
    assert git(target, "branch", "--show-current") == ServeConfig.model_fields["branch"].default
    (target / "kept").write_text("the controller's clone is not made again\n")
    again = subprocess.run(script, env=run_env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert (target / "kept").exists()


def test_kustomize_renders_everything_into_the_namespace() -> None:
    """`kubectl kustomize` (where kubectl is installed) renders every manifest into the
    plumb namespace."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    done = subprocess.run(
        [kubectl, "kustomize", str(KUBE)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    rendered = [d for d in YAML(typ="safe").load_all(done.stdout) if d]
    assert sorted((d["kind"], d["metadata"]["name"]) for d in rendered) == sorted(
        (d["kind"], d["metadata"]["name"]) for d in documents()
    )
    namespace = kustomization()["namespace"]
    for doc in rendered:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == namespace, doc["kind"]
