"""A chart as the checks see it: its parsed root files and its renders under Olares' injected values.

Renders, all with release name = app name (as Olares installs and OAC lints):
- `main`: replicaCount 1, namespace `<app>-admin`, `olaresEnv` empty (what OAC lint injects);
- `probe`: replicaCount 0 (app-service's stop value), namespace `app-namespace`, every manifest env
  set to a placeholder, so env-guarded templates (the HF token Secret) render too;
- one more per extra accelerator mode, with `.Values.GPU.Type = <mode>`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from generator.adapters import Helm, HelmFailure
from generator.lint import helm
from generator.lint.helm import Doc
from generator.lint.values import OAC_NAMESPACE, OWNER, filled_env, olares_values

ROOT_FILES = ("Chart.yaml", "values.yaml", "OlaresManifest.yaml")
WORKLOAD_KINDS = ("Deployment", "StatefulSet")


@dataclass
class Render:
    label: str
    namespace: str
    replicas: int
    gpu_type: str
    docs: list[Doc]


@dataclass
class ChartView:
    name: str
    tree: dict[str, str]
    chart: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    parse_errors: dict[str, str] = field(default_factory=dict)  # root file -> why it is unusable
    renders: list[Render] = field(default_factory=list)  # main, probe (only those that rendered)
    render_errors: list[tuple[str, str]] = field(default_factory=list)  # (scenario, engine message)
    doc_errors: list[tuple[str, str]] = field(default_factory=list)  # (template, YAML problem)
    modes: dict[str, list[Doc]] = field(default_factory=dict)  # accelerator mode -> docs
    form: str = "single"  # the app form the store chose (docs/forms.md); the chart rules of a form read it

    @property
    def main(self) -> list[Doc] | None:
        return self.renders[0].docs if self.renders and self.renders[0].label == "main" else None

    def accelerators(self) -> list[dict[str, Any]]:
        spec = self.manifest.get("spec") or {}
        entries = spec.get("accelerator") if isinstance(spec, dict) else None
        return [e for e in entries or () if isinstance(e, dict)]


def _parse_root(tree: dict[str, str], rel: str) -> tuple[dict[str, Any], str | None]:
    import yaml

    if rel not in tree:
        return {}, "missing"
    try:
        data = yaml.load(tree[rel], Loader=helm.yaml_loader())
    except yaml.YAMLError as exc:
        return {}, f"not YAML: {exc}".replace("\n", " ")
    if data is None and rel == "values.yaml":
        return {}, None
    if not isinstance(data, dict):
        return {}, f"expected a mapping, got {type(data).__name__}"
    return data, None


def main_gpu_type(view: ChartView) -> str:
    modes = [str(e.get("mode")) for e in view.accelerators() if e.get("mode")]
    return "nvidia" if "nvidia" in modes or not modes else modes[0]


def _render(engine: Helm, view: ChartView, folder: Path, label: str, namespace: str, replicas: int, gpu: str,
            env: dict[str, str]) -> Render | None:
    values = olares_values(view.name, view.manifest, view.values, replicas=replicas, gpu_type=gpu, olares_env=env)
    try:
        rendered = helm.render(folder, values, name=view.name, namespace=namespace, engine=engine)
    except HelmFailure as exc:  # a template that fails under these values: a HELM002 finding, not an error
        view.render_errors.append((f"{label} (GPU.Type={gpu}, replicaCount={replicas})", exc.detail))
        return None
    docs, errors = helm.documents(rendered)
    view.doc_errors += [e for e in errors if e not in view.doc_errors]
    return Render(label, namespace, replicas, gpu, docs)


def build_view(name: str, tree: dict[str, str], folder: Path, engine: Helm | None = None) -> ChartView:
    engine = engine or Helm()
    view = ChartView(name=name, tree=tree)
    for rel, attr in zip(ROOT_FILES, ("chart", "values", "manifest"), strict=True):
        data, problem = _parse_root(tree, rel)
        setattr(view, attr, data)
        if problem:
            view.parse_errors[rel] = problem
    if "Chart.yaml" in view.parse_errors:
        return view  # Helm cannot load the chart; HELM001 reports it
    gpu = main_gpu_type(view)
    for label, ns, replicas, env in (("main", f"{name}-{OWNER}", 1, {}),
                                     ("probe", OAC_NAMESPACE, 0, filled_env(view.manifest))):
        done = _render(engine, view, folder, label, ns, replicas, gpu, env)
        if done is not None:
            view.renders.append(done)
    if view.main is not None:
        view.modes[gpu] = view.main
    for mode in sorted({str(e.get("mode")) for e in view.accelerators() if e.get("mode")} - {gpu}):
        done = _render(engine, view, folder, f"mode {mode}", f"{name}-{OWNER}", 1, mode, {})
        if done is not None:
            view.modes[mode] = done.docs
    return view


def workloads(docs: list[Doc]) -> Iterator[Doc]:
    return (d for d in docs if d.kind in WORKLOAD_KINDS)


def pod_spec(doc: Doc) -> dict[str, Any]:
    spec = doc.body.get("spec") or {}
    template = spec.get("template") or {} if isinstance(spec, dict) else {}
    pod = template.get("spec") if isinstance(template, dict) else None
    return pod if isinstance(pod, dict) else {}


def containers(doc: Doc) -> list[dict[str, Any]]:
    """Main containers only: Olares' resource checks leave init containers out."""
    return [c for c in pod_spec(doc).get("containers") or () if isinstance(c, dict)]
