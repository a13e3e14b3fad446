"""deploy/Dockerfile builds an image that runs karp-provisioner as an unprivileged user.

A lint of the Dockerfile (multi-stage on python:3.11-slim, a numeric non-root USER matching the
Deployment, no ADD of URLs, no HEALTHCHECK, ENTRYPOINT karp-provisioner in exec form, every COPY
source present in the build context), with a broken-file test for each rule; and a check that the
one package the image holds, provisioner/, imports without the repository's other packages.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
            for line in (raw.strip() for raw in joined.splitlines()) if line]


def dockerfile_problems(text: str) -> list[str]:
    steps = dockerfile_instructions(text)
    problems = []
    froms = [args for op, args in steps if op == "FROM"]
    if len(froms) < 2:
        problems.append("not multi-stage (one FROM)")
    if any(not re.match(r"python:3\.11-slim\b", f) for f in froms):
        problems.append(f"base images must be python:3.11-slim: {froms}")
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]
    users = [args for op, args in final if op == "USER"]
    if not users or not re.fullmatch(r"[1-9][0-9]*(:[1-9][0-9]*)?", users[-1]):
        problems.append(f"final stage must end as a numeric non-root USER, has {users}")
    elif users[-1].split(":")[0] != "65532":
        problems.append(f"USER {users[-1]}: the Deployment runs as 65532")
    for op, args in steps:
        if op == "ADD" and re.search(r"https?://", args):
            problems.append(f"ADD of a URL: {args}")
        if op == "HEALTHCHECK":
            problems.append("HEALTHCHECK: Kubernetes ignores it; the Deployment's probes do the job")
        if op == "COPY" and "--from=" not in args:
            sources = args.split()[:-1]
            problems += [f"COPY source {s} does not exist in the build context" for s in sources
                         if not s.startswith("--") and not (ROOT / s).exists()]
    entry = [args for op, args in final if op == "ENTRYPOINT"]
    if not entry or not entry[-1].startswith("[") or yaml.safe_load(entry[-1])[0] != "karp-provisioner":
        problems.append(f"ENTRYPOINT must be the exec form of karp-provisioner, is {entry}")
    return problems


def test_dockerfile_is_multi_stage_non_root_and_runs_karp_provisioner() -> None:
    assert dockerfile_problems((DEPLOY / "Dockerfile").read_text()) == []


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: t.replace("USER 65532:65532", "USER root"), "numeric non-root USER"),
    (lambda t: t.replace("USER 65532:65532\n", ""), "numeric non-root USER"),
    (lambda t: t + "ADD https://example.invalid/x.tar.gz /opt/\n", "ADD of a URL"),
    (lambda t: t + "HEALTHCHECK CMD true\n", "HEALTHCHECK"),
    (lambda t: t.replace('ENTRYPOINT ["karp-provisioner"]', "ENTRYPOINT karp-provisioner"), "exec form"),
    (lambda t: t.replace("COPY provisioner/ provisioner/", "COPY provisionr/ provisioner/"), "does not exist"),
    (lambda t: t.replace("FROM python:3.11-slim AS build", "FROM python:latest AS build"), "python:3.11-slim"),
])
def test_dockerfile_lint_rejects_a_broken_file(edit: Any, expected: str) -> None:
    problems = dockerfile_problems(edit((DEPLOY / "Dockerfile").read_text()))
    assert any(expected in p for p in problems), problems




_IMPORT_ALL = """
import importlib, importlib.abc, importlib.metadata, json, pkgutil, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('diagnose', 'tui', 'sim', 'tests'):
            raise ImportError(f'{name} is not in the image')
        return None
sys.meta_path.insert(0, Block())
before = set(sys.modules)
import provisioner
for info in pkgutil.walk_packages(provisioner.__path__, 'provisioner.'):
    importlib.import_module(info.name)
tops = {m.split('.')[0] for m in set(sys.modules) - before}
owners = importlib.metadata.packages_distributions()
print(json.dumps(sorted({d for t in tops if t not in sys.stdlib_module_names and t != 'provisioner'
                         for d in owners.get(t, [])})))
"""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_closure() -> set[str]:
    """The distributions ``pip install .`` brings: pyproject's dependencies and, transitively, theirs."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    stack = [Requirement(r).name for r in project["dependencies"]]
    seen: set[str] = set()
    while stack:
        name = _canonical(stack.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(req.name)
    return seen


def test_the_image_holds_everything_the_provisioner_package_imports() -> None:
    """The image has provisioner/ and what pyproject.toml's dependencies install: every provisioner module
    must import without diagnose, tui and sim, and every library it imports must be a (transitive) dependency."""
    python = ROOT / ".venv" / "bin" / "python"
    out = subprocess.run([str(python if python.exists() else "python"), "-c", _IMPORT_ALL], capture_output=True,
                         text=True, timeout=120, check=False, cwd="/")
    assert out.returncode == 0, out.stderr[-2000:]
    imported = {_canonical(d) for d in json.loads(out.stdout.strip().splitlines()[-1])}
    missing = sorted(imported - declared_closure())
    assert missing == [], f"imported by provisioner but not installed by pyproject.toml's dependencies: {missing}"
