"""Lint one rendered chart held in memory: the Helm engine, Kubernetes schemas, the Olares chart rules.

`lint_chart(name, tree)` writes the tree to a temporary folder for Helm, then
- HELM001: every error of `helm lint --strict` (Kubernetes v1.30.0) with the Olares-injected values;
- HELM002: the Helm engine cannot render the chart with those values;
- K8S001/K8S002/K8S003: every rendered document against the strict Kubernetes 1.30 schemas;
- OLARES001..: the Olares chart rules of `generator/lint/olares.py`;
- OAC001: the platform's own validator (oac.Lint) where it is here (generator/lint/oac.py).
docs/rules.md (generated from the one rule registry, generator/core/ruleset.py) lists every rule with
its why and its source. The Helm engine is the Helm adapter the caller passes (the CLI builds one).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from generator.adapters import Helm
from generator.lint import olares  # noqa: F401  (registers the OLARES rules)
from generator.lint.oac import oac_findings
from generator.lint import shared  # noqa: F401  (registers the SHARED rules)
from generator.lint import helm as _helm
from generator.lint import kube
from generator.lint.registry import CHART_RULES, ChartRule, Issue, checks, register
from generator.lint.values import olares_values
from generator.lint.view import ChartView, build_view, main_gpu_type
from generator.core import Finding

register("HELM001", "`helm lint --strict` (Kubernetes v1.30.0) reports no error with the values Olares injects",
         "Market ingest and `olares-cli chart lint` run the Helm engine; a lint error blocks the upload",
         "docs/domain.md#hami A step 4; helm-python-sdk `lint()` report (severity 3 = error)")
register("HELM002", "the chart renders with the values Olares injects (release name = app name)",
         "app-service installs by rendering with exactly these values; a failing template means no install",
         "docs/domain.md#hami A step 4, §4.4; oac helmrender/values.go BuildValues")
register("K8S001", "every rendered document validates against the strict Kubernetes 1.30 schema",
         "the API server rejects unknown fields and wrong types at install time, after the user waited",
         "kubernetes-validate strict schemas (github.com/willthames/kubernetes-validate)")
register("K8S002", "every rendered template parses as YAML objects with apiVersion and kind",
         "Helm and the API server refuse a manifest that is not a list of Kubernetes objects",
         "helm-python-sdk `Chart.render` returns raw text; only parsing finds broken YAML")
register("K8S003", "every rendered kind is known to Kubernetes 1.30 (CRDs are reported, not failed)",
         "an unknown apiVersion/kind is a typo unless the cluster has that CRD",
         "kubernetes-validate SchemaNotFoundError", severity="warning")


def _finding(rule: ChartRule, name: str, issue: Issue, file: str | None) -> Finding:
    where = issue.where or ""
    if file is not None:
        message = f"{where}: {issue.message}" if where else issue.message
        return Finding(rule.id, rule.severity, name, message, issue.fix, file, None)
    return Finding(rule.id, rule.severity, name, issue.message, issue.fix, f"{name}/{where}".rstrip("/"),
                   issue.line)


def _helm_lint(engine: Helm, view: ChartView, folder: Path) -> Iterable[Issue]:
    values = olares_values(view.name, view.manifest, view.values, gpu_type=main_gpu_type(view))
    for path, message in _helm.lint_errors(folder, values, engine=engine):
        yield Issue(" ".join(message.split()), "fix the template or the chart file Helm names", path or None)


def _render_failures(view: ChartView) -> Iterable[Issue]:
    for scenario, message in view.render_errors:
        yield Issue(f"render {scenario} failed: {' '.join(message.split())}",
                    "make every value lookup safe under the values Olares injects (| default, with)", "templates/")


def _documents(view: ChartView) -> list[_helm.Doc]:
    """Each rendered object once: the main render, plus what only another render produced (e.g. the
    Secret that needs an env value); the same object with other replicas is not validated twice."""
    seen: dict[tuple[str, str], _helm.Doc] = {}
    for docs in [r.docs for r in view.renders] + list(view.modes.values()):
        for doc in docs:
            seen.setdefault((doc.source, doc.label), doc)
    return list(seen.values())


def _schema(view: ChartView) -> Iterable[tuple[str, Issue]]:
    for source, problem in view.doc_errors:
        yield "K8S002", Issue(problem, "make the template emit YAML objects", source)
    reported: set[tuple[str, str, str]] = set()
    for doc in _documents(view):
        if not doc.body.get("apiVersion") or not doc.body.get("kind"):
            yield "K8S002", Issue(f"{doc.label}: a document without apiVersion or kind", "set both", doc.source)
            continue
        try:
            errors = kube.validate(doc.body)
        except kube.UnknownKind as exc:
            yield "K8S003", Issue(f"{doc.label}: {exc}", "check apiVersion and kind (or ship the CRD)", doc.source)
            continue
        for err in errors:
            key = (doc.label, err.path, err.message)
            if key not in reported:
                reported.add(key)
                yield "K8S001", Issue(f"{doc.label}: {err.path}: {err.message}",
                                      "fix the field in the template or the planned values", doc.source)


def lint_chart(name: str, tree: dict[str, str], *, file: str | None = None, helm: Helm | None = None,
               form: str = "single") -> list[Finding]:
    """Every finding for one rendered chart (`{relative path: text}`), sorted by rule id.

    Findings point at `<name>/<chart file>` (with a line when known); with `file` (e.g. the catalog
    app file the chart was rendered from) they point there and the message names the chart file.
    `helm` is the Helm adapter to use (a fresh one when None); `form` the app form the store chose (docs/forms.md).
    """
    engine = helm or Helm()
    found: list[tuple[str, Issue]] = []
    with _helm.chart_folder(name, tree) as folder:
        view = build_view(name, tree, folder, engine)
        view.form = form
        found += [("HELM001", i) for i in _helm_lint(engine, view, folder)]
    found += [("HELM002", i) for i in _render_failures(view)]
    found += list(_schema(view))
    for rule, check in checks():
        found += [(rule.id, i) for i in check(view)]
    findings = [_finding(CHART_RULES[rid], name, issue, file) for rid, issue in found]
    findings += oac_findings(name, tree)  # the platform's own validator, where it is here (generator/lint/oac.py)
    return sorted(findings, key=lambda f: (f.rule, f.file or "", f.line or 0, f.message))


__all__ = ["CHART_RULES", "lint_chart"]
