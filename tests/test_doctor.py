"""`catalog doctor APP --kube-context CTX`: the running pod against its chart, and the known crashes in its logs.

No Kubernetes API server can run in the test environment. The cluster here is a STAND-IN
(tests/support/kube_api.py): a real HTTP server on 127.0.0.1 answering the four core/v1 paths the doctor reads
with JSON the kubernetes client's own serializer wrote. The command reaches it through a real kubeconfig
($KUBECONFIG, a named context), the real kubernetes client and the real Kube adapter.

The log lines are not invented: each is quoted from the maintainer's public notes (cited beside it). Where a
note paraphrases the log (`ModuleNotFoundError: xxhash`, `CUDA OOM`), the line is the note's own words.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from kubernetes.client import (V1Container, V1ContainerState, V1ContainerStateRunning, V1ContainerStateTerminated,
                               V1ContainerStateWaiting, V1ContainerStatus, V1EnvVar, V1EnvVarSource,
                               V1ObjectMeta, V1Pod, V1PodCondition, V1PodSpec, V1PodStatus,
                               V1ResourceRequirements, V1SecretKeySelector, V1Service, V1ServicePort,
                               V1ServiceSpec)

from generator.adapters.kube import EnvEntry, Kube
from generator.catalog import load_catalog
from generator.chart.plan import plan
from generator.rules import all_rules
from generator.rules.signatures import MARKET, POSTS, SIGNATURES
from generator.smoke.pod import compare_pod, diagnose, observe, scan

from support.catalogs import MARKET_CATALOG
from support.kube_api import Blackhole, StandInKubeApi, write_kubeconfig
from support.smoke import run_cli, run_json

APP, NS, CONTEXT = "vllmqwen36turbo27bone", "vllmqwen36turbo27bone-alice", "olares-one"
FAST = f"{MARKET} vllmqwen36turbo27bone/OlaresManifest.yaml"
SECRET_ENV = "s3cr3t-vllm-key-0123456789"  # VLLM_API_KEY: a name the redactor knows, a value of no known format
SECRET_ARG = "another-s3cr3t-for-the-arg"  # the value of --api-key
HF_SECRET = "hf_" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr"  # an HF token pasted inline

# Each signature's log text, as the maintainer's public notes show it.
SAMPLES = {
    "hami-0m-limit": ("CUDA_DEVICE_MEMORY_LIMIT_0=0m", f"{POSTS} discord_post_olares_may8_2026_en.md (bugs 1)"),
    "hami-0m-crash": ("RuntimeError: CUDA driver error: invalid argument", f"{POSTS} comment_vllm_40807.md"),
    "xxhash-missing": ("ModuleNotFoundError: xxhash", f"{FAST}:29 (v2.5.3)"),
    "p5b-oom": ("`GENESIS_ENABLE_P5B_KV=1` causes CUDA OOM at first inference on 24GB", f"{FAST}:27 (v2.5.5)"),
    "dynamo-shape-mismatch": ("produces TorchDynamo shape mismatch (FakeTensor mul op, 196608 vs 48*s72) at engine "
                              "init", f"{FAST}:41 (v2.2.1)"),
    "workspace-locked": ("AssertionError: Workspace is locked but allocation from", f"{POSTS} comment_vllm_40807.md"),
}
# A healthy boot, from the same comment (github.com/aamsellem/olares-one-market comment_vllm_40807.md, Result 1/2).
BOOT = """INFO Resolved architecture: Qwen3_5MTP
INFO Using TURBOQUANT attention backend out of potential backends: ['TURBOQUANT'].
Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 4/4
Application startup complete.
"""
# The crash of the Workspace lock as the comment quotes it (comment_vllm_40807.md, Result 2).
WORKSPACE_TRACE = """File ".../vllm/v1/attention/backends/turboquant_attn.py", line 862, in _decode_attention
    current_workspace_manager().get_simultaneous(...)
File ".../vllm/v1/worker/workspace.py", line 157, in _ensure_workspace_size
    raise AssertionError(
AssertionError: Workspace is locked but allocation from
'turboquant_attn.py:862:_decode_attention' requires 0.76 MB,
current size is 0.00 MB. Workspace growth is not allowed after locking.
"""


@pytest.fixture(scope="module")
def spec():
    return plan(load_catalog(MARKET_CATALOG).select([APP])[0])


def service() -> V1Service:
    return V1Service(metadata=V1ObjectMeta(name=APP, namespace=NS, labels={"app.kubernetes.io/name": APP}),
                     spec=V1ServiceSpec(selector={"app.kubernetes.io/name": APP},
                                        ports=[V1ServicePort(name="http", port=8000, target_port="http")]))


def engine_container(spec, *, image=None, extra_args=(), env=None, gpumem_request=True) -> V1Container:
    values = spec.values.engine
    env_vars = [V1EnvVar(name=e.name, value=e.value) for e in values.env] if env is None else env
    env_vars += [V1EnvVar(name="HF_ENDPOINT", value="https://huggingface.co"),
                 V1EnvVar(name="HF_TOKEN", value_from=V1EnvVarSource(secret_key_ref=V1SecretKeySelector(
                     name=f"{APP}-secrets", key="HF_TOKEN", optional=True)))]
    gpu = str(values.resources.limits.gpumem)
    requests = {"cpu": "4", "memory": "24Gi", **({"nvidia.com/gpumem": gpu} if gpumem_request else {})}
    return V1Container(name="engine", image=image or values.image, command=list(values.command),
                       args=[*values.args, *extra_args], env=env_vars,
                       resources=V1ResourceRequirements(requests=requests,
                                                        limits={"cpu": "16", "memory": "40Gi",
                                                                "nvidia.com/gpumem": gpu}))


def pod(name: str, container: V1Container, *, restarts=0, ready=True, last=None, waiting=None) -> V1Pod:
    state = (V1ContainerState(waiting=V1ContainerStateWaiting(reason=waiting)) if waiting
             else V1ContainerState(running=V1ContainerStateRunning()))
    return V1Pod(
        metadata=V1ObjectMeta(name=name, namespace=NS, labels={"app.kubernetes.io/name": APP},
                              creation_timestamp=datetime(2026, 5, 8, 9, 0, tzinfo=UTC)),
        spec=V1PodSpec(containers=[container]),
        status=V1PodStatus(phase="Running", conditions=[V1PodCondition(type="Ready", status=str(ready))],
                           container_statuses=[V1ContainerStatus(
                               name="engine", image=container.image, image_id=f"{container.image}@sha256:{'a' * 64}",
                               ready=ready, restart_count=restarts, state=state,
                               last_state=V1ContainerState(terminated=last) if last else V1ContainerState())]))


def drifted_pod(spec) -> V1Pod:
    """The Fast app as it crashed in the notes: an older image, xxhash, P5B on, the `0m` limit, an OOMKilled restart."""
    env = [V1EnvVar(name=e.name, value="0m" if e.name == "CUDA_DEVICE_MEMORY_LIMIT_0" else e.value)
           for e in spec.values.engine.env]
    env += [V1EnvVar(name="GENESIS_ENABLE_P5B_KV", value="1"), V1EnvVar(name="VLLM_API_KEY", value=SECRET_ENV)]
    container = engine_container(spec, image="docker.io/aamsellem/vllm-qwen36-blackwell:0.20.0-genesis-v2",
                                 extra_args=("--prefix-caching-hash-algo", "xxhash", "--api-key", SECRET_ARG),
                                 env=env, gpumem_request=False)
    container.env.append(V1EnvVar(name="HF_TOKEN", value=HF_SECRET))  # pasted inline, after the secretKeyRef
    last = V1ContainerStateTerminated(reason="OOMKilled", exit_code=137,
                                      finished_at=datetime(2026, 5, 8, 9, 5, tzinfo=UTC))
    return pod(f"{APP}-7d9f-0", container, restarts=3, ready=False, last=last, waiting="CrashLoopBackOff")


def drifted_logs() -> dict:
    previous = "\n".join([BOOT.strip(), SAMPLES["hami-0m-crash"][0], SAMPLES["xxhash-missing"][0],
                          SAMPLES["dynamo-shape-mismatch"][0], SAMPLES["p5b-oom"][0], WORKSPACE_TRACE.strip()])
    return {(f"{APP}-7d9f-0", "engine", True): previous + "\n", (f"{APP}-7d9f-0", "engine", False): BOOT}


@pytest.fixture
def cluster(monkeypatch, tmp_path):
    """Start a stand-in API with the given pods; $KUBECONFIG names it as context `olares-one`."""
    started = []

    def start(pods, logs=None):
        api = StandInKubeApi([service()], pods, logs).__enter__()
        started.append(api)
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kubeconfig", api.url, CONTEXT)))
        return api

    yield start
    for api in started:
        api.__exit__(None, None, None)


def doctor(catalog_copy, *extra):
    return ["doctor", APP, "--kube-context", CONTEXT, "--catalog", str(catalog_copy), *extra]


def test_a_drifted_crashing_pod(cluster, catalog_copy, spec, capsys):
    api = cluster([drifted_pod(spec)], drifted_logs())
    code, out = run_json(doctor(catalog_copy, "--logs", "50"), capsys)
    assert code == 1
    assert (out["pod"], out["namespace"], out["container"]) == (f"{APP}-7d9f-0", NS, "engine")
    assert out["restarts"] == 3 and out["state"] == "waiting: CrashLoopBackOff"
    assert out["last_termination"]["reason"] == "OOMKilled" and out["last_termination"]["exit_code"] == 137
    drift = {d["field"]: d for d in out["drift"]}
    assert drift["image"]["pod"].endswith("genesis-v2") and drift["image"]["chart"] == spec.values.engine.image
    assert drift["env CUDA_DEVICE_MEMORY_LIMIT_0"]["chart"] == "24300m"
    assert drift["env CUDA_DEVICE_MEMORY_LIMIT_0"]["pod"] == "0m"
    assert drift["env GENESIS_ENABLE_P5B_KV"]["chart"] == "(not set)" and drift["env GENESIS_ENABLE_P5B_KV"]["pod"] == "1"
    assert drift["gpumem request (MiB)"] == {"field": "gpumem request (MiB)", "chart": "24300", "pod": "(not set)",
                                             "note": ""}
    assert "gpumem limit (MiB)" not in drift
    assert drift["args"]["pod"] == "--prefix-caching-hash-algo xxhash --api-key ***"
    assert drift["env VLLM_API_KEY"]["pod"] == "***"
    found = {s["signature"]: s for s in out["signatures"]}
    assert set(found) == set(SAMPLES)
    assert {s["rule"] for s in out["signatures"]} == {"HAMI002", "ENG001", "GEN005", "GEN006", "GEN004"}
    assert found["hami-0m-limit"]["where"] == "env" and found["xxhash-missing"]["where"] == "previous log"
    assert found["xxhash-missing"]["line"] == "ModuleNotFoundError: xxhash"
    assert "--prefix-caching-hash-algo xxhash" in found["xxhash-missing"]["fix"]
    assert [p["what"].split(" (")[0] for p in out["problems"]] == [
        "the engine's previous instance was OOMKilled", "the engine is CrashLoopBackOff after 3 restart(s)"]
    logs = [q for path, q in api.requests if path.endswith("/log")]
    assert {(q["previous"], q["tailLines"], q["container"]) for q in logs} == {("true", "50", "engine"),
                                                                              ("false", "50", "engine")}


def test_the_table_names_rule_and_fix_and_never_a_secret(cluster, catalog_copy, spec, capsys):
    cluster([drifted_pod(spec)], drifted_logs())
    code, out, err = run_cli(doctor(catalog_copy), capsys)
    assert code == 1
    for sig in SIGNATURES:
        assert f"signature {sig.id} [{sig.rule}]" in out
    assert "fix: drop `--prefix-caching-hash-algo xxhash`" in out and "OOMKilled (exit 137" in out
    assert "24300m" in out and "0m" in out
    code_json, out_json, err_json = run_cli(doctor(catalog_copy, "--json"), capsys)
    for text in (out, err, out_json, err_json):
        for secret in (SECRET_ENV, SECRET_ARG, HF_SECRET):
            assert secret not in text


def test_a_clean_pod_exits_0_and_reads_no_previous_log(cluster, catalog_copy, spec, capsys):
    api = cluster([pod(f"{APP}-5c4b-0", engine_container(spec))], {(f"{APP}-5c4b-0", "engine", False): BOOT})
    code, out = run_json(doctor(catalog_copy), capsys)
    assert code == 0, (out["drift"], out["signatures"], out["problems"])
    assert out["clean"] is True and out["drift"] == [] and out["signatures"] == [] and out["problems"] == []
    assert out["image_id"].endswith("@sha256:" + "a" * 64)
    assert [q.get("previous") for path, q in api.requests if path.endswith("/log")] == ["false"]
    code, text, _ = run_cli(doctor(catalog_copy), capsys)
    assert code == 0 and "clean: the pod runs what the chart says" in text


def test_an_unreachable_cluster_exits_2(monkeypatch, tmp_path, catalog_copy, capsys):
    closed = Blackhole()
    url = closed.url
    closed.close()  # nothing listens there any more: connection refused
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kubeconfig", url, CONTEXT)))
    start = time.monotonic()
    code, _, err = run_cli(doctor(catalog_copy, "--timeout", "5"), capsys)
    assert code == 2 and "the Kubernetes API (listing Services)" in err, err
    assert time.monotonic() - start < 10


def test_a_hanging_cluster_exits_2_at_the_deadline(monkeypatch, tmp_path, catalog_copy, capsys):
    hole = Blackhole()
    try:
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kubeconfig", hole.url, CONTEXT)))
        start = time.monotonic()
        code, _, err = run_cli(doctor(catalog_copy, "--timeout", "1.5"), capsys)
        took = time.monotonic() - start
    finally:
        hole.close()
    assert code == 2 and "did not answer within the deadline of 1.5 s (all calls together)" in err, err
    assert 1.4 < took < 6


def test_an_unknown_context_is_a_usage_error(cluster, catalog_copy, capsys):
    cluster([])
    code, _, err = run_cli(["doctor", APP, "--kube-context", "nope", "--catalog", str(catalog_copy)], capsys)
    assert code == 2 and "cannot load the kubeconfig context 'nope'" in err


def test_no_pod_behind_the_service(cluster, catalog_copy, capsys):
    cluster([])
    code, _, err = run_cli(doctor(catalog_copy), capsys)
    assert code == 2 and f"no pod behind Service {NS}/{APP}" in err


def test_the_adapter_returns_typed_views(cluster, spec):
    cluster([drifted_pod(spec)], drifted_logs())
    kube = Kube.from_kubeconfig(CONTEXT, timeout_s=10)
    (view,) = kube.pods(NS, f"app.kubernetes.io/name={APP}")
    engine = view.containers[0]
    assert engine.gpumem_request is None and engine.gpumem_limit == "24300"
    assert engine.env_value("HF_TOKEN") == EnvEntry("HF_TOKEN", HF_SECRET)  # the last entry of a name wins
    assert EnvEntry("HF_TOKEN", None, f"secret {APP}-secrets key HF_TOKEN") in engine.env
    assert str(engine.last_termination) == "OOMKilled (exit 137) at 2026-05-08T09:05:00+00:00"
    tail = kube.pod_log(view.name, NS, "engine", tail_lines=2, previous=True)
    assert tail is not None and tail.splitlines() == [
        "'turboquant_attn.py:862:_decode_attention' requires 0.76 MB,",
        "current size is 0.00 MB. Workspace growth is not allowed after locking."]
    assert kube.pod_log(view.name, NS, "engine", tail_lines=5, limit_bytes=7) == "INFO Re"
    assert kube.pod_log("gone", NS, "engine", tail_lines=5) is None


def test_observe_is_what_smoke_records(cluster, spec):
    """smoke --kube-context: the image, its digest and the args of the pod it measured."""
    cluster([pod(f"{APP}-5c4b-0", engine_container(spec, extra_args=("--max-num-seqs", "2")))])
    seen = observe(Kube.from_kubeconfig(CONTEXT, timeout_s=10), APP, None, log_lines=0)
    assert seen.engine.image == spec.values.engine.image and seen.logs == ()
    assert seen.engine.args[-2:] == ("--max-num-seqs", "2") and seen.engine.image_id.startswith(seen.engine.image)
    assert [(d.field, d.chart, d.pod) for d in compare_pod(seen, spec)] == [("args", "(none)", "--max-num-seqs 2")]


def test_every_signature_points_at_a_rule_and_matches_its_quoted_sample():
    rules = {r.id for r in all_rules()}
    assert set(SAMPLES) == {s.id for s in SIGNATURES}
    for sig in SIGNATURES:
        assert sig.rule in rules, f"{sig.id} points at unknown rule {sig.rule}"
        assert sig.matches(SAMPLES[sig.id][0]), sig.id
        assert ("github.com/" in sig.source) and sig.fix and sig.title
        assert not any(sig.matches(line) for line in BOOT.splitlines()), sig.id


def test_oom_counts_as_the_p5b_crash_only_with_p5b_on(cluster, spec):
    off = engine_container(spec)
    cluster([pod("a", off)], {("a", "engine", False): SAMPLES["p5b-oom"][0] + "\n"})
    kube = Kube.from_kubeconfig(CONTEXT, timeout_s=10)
    assert scan(observe(kube, APP, NS), spec.resolved.genesis) == []


def test_a_limit_set_twice_reports_the_one_that_wins(spec):
    """HAMi or a webhook appending `CUDA_DEVICE_MEMORY_LIMIT_0=0m` after the chart's entry: the last one wins."""
    from generator.adapters.kube import pod_view

    raw = pod("p", engine_container(spec))
    raw.spec.containers[0].env.append(V1EnvVar(name="CUDA_DEVICE_MEMORY_LIMIT_0", value="0m"))
    from generator.smoke.kube_forward import AppService
    from generator.smoke.pod import PodObservation

    view = pod_view(raw)
    seen = PodObservation(APP, AppService(NS, APP, ""), view, view.containers[0])
    found = diagnose(seen, spec)
    (limit,) = [d for d in found.drift if d.field == "env CUDA_DEVICE_MEMORY_LIMIT_0"]
    assert (limit.chart, limit.pod) == ("24300m", "0m") and "set 2 times" in limit.note
    assert [h.signature.id for h in found.hits] == ["hami-0m-limit"]
