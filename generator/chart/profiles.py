"""Olares manifest profiles: what differs between the two manifest formats a market can ask for (docs/profiles.md).

- `olares-v3`: olaresManifest 0.12.0, apiVersion v3, one `spec.accelerator` entry per GPU mode, `workloadReplicas`,
  `appCommon`/`appCache` permissions, no `metadata.appid`, no `onlyAdmin`, `i18n/<locale>/OlaresManifest.yaml`,
  `options.LLMGatewaySupported` (Router), the Hugging Face envs from the user's OLARES_USER_HUGGINGFACE_*;
  Olares >= 1.12.6 (the first release that reads v3 and the only format it installs) and the maintainer's v3
  market (aamsellem/olares-one-market scripts/validate-manifests-v3.js @b41af142). The default.
- `olares-v2`: olaresManifest 0.10.0, apiVersion v2, the flat `spec.requiredCpu/limitedCpu/requiredMemory/
  limitedMemory/requiredDisk/limitedDisk/requiredGpu/limitedGpu` fields with CPU in integer cores, the `appData`
  permission, Olares >= 1.12.3: the format of the maintainer's market (github.com/aamsellem/orales-one-market
  CLAUDE.md "Olares Manifest Constraints": "Manifest version: 0.10.0 (must match official beclab/apps format,
  NOT 0.11.0)", "Top-level apiVersion: 'v2'", "CPU values in integer cores", "Olares dependency: >=1.12.3-0";
  every app's OlaresManifest.yaml at 6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9), and the fields its market build
  script reads (scripts/build-catalog.js: spec.requiredGpu, requiredCpu, requiredMemory, requiredDisk).
  Served to Olares <= 1.12.5 only: 1.12.6 no longer shows or installs apiVersion v2 apps.

A catalog picks its profile in catalog/market.yaml (`profile:`); a publish target may pass another one to
`generator.chart.plan.plan(r, profile=...)`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.core import UsageError
from generator.schema import DEFAULT_PROFILE, ProfileName

MARKET_SOURCE = "github.com/aamsellem/orales-one-market@6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9"
V3_MARKET_SOURCE = "github.com/aamsellem/olares-one-market@b41af142d2f6a087e1a36d659b15c3664c8f4823"


@dataclass(frozen=True)
class Profile:
    name: ProfileName
    manifest_version: str
    api_version: str
    olares_dependency: str  # options.dependencies olares version
    flat_resources: bool  # v2: flat spec fields; v3: spec.accelerator entries
    integer_cpu: bool  # the manifest's CPU in whole cores
    workload_replicas: bool  # the manifest lists workloadReplicas
    permission: tuple[tuple[str, bool], ...]
    models_path: str  # Go template expression (Helm) of the host folder that keeps the weights
    hf_endpoint_from: str  # the Olares env HF_ENDPOINT is filled from
    hf_token_from: str  # the Olares env HF_TOKEN is filled from
    source: str
    appid: bool = True  # metadata.appid (deprecated in 0.12.0: "created automatically from metadata.name")
    only_admin: bool = True  # spec.onlyAdmin: true (v3: the app is individual, not shared; the spec's default false)
    i18n: bool = False  # i18n/<locale>/OlaresManifest.yaml per locale of spec.locale
    llm_gateway: bool = False  # options.LLMGatewaySupported and the MODEL_* envs Router reads (0.12.0)
    env_flags: bool = False  # HF envs declared `required: false, applyOnChange: true` (the official v3 charts)
    # one chart for every accelerator mode the app's devices install under (docs/devices.md "Charts"): a
    # `spec.accelerator` entry per mode, values.yaml `modes.<mode>`, the Deployment choosing by the injected GPU type.
    # On in olares-v3: Olares installs the entry whose mode matches the selected GPU type (beclab/Olares@1b311ec3
    # framework/app-service/pkg/appinstaller/helm_utils.go:173-178, appcfg resolveResourceMode). The maintainer's
    # market validator accepts exactly one entry, mode nvidia (scripts/validate-manifests-v3.js@b41af142 'must declare
    # one nvidia accelerator envelope'): where it and the platform differ, the platform wins (docs/devices.md).
    # The v2 profile keeps one device (flat fields, one envelope).
    per_mode: bool = False


OLARES_V3 = Profile(
    name="olares-v3", manifest_version="0.12.0", api_version="v3",
    olares_dependency=">=1.12.6-0",  # v3, appCommon and accelerator need 1.12.6
    flat_resources=False, integer_cpu=True, workload_replicas=True,  # CLAUDE.md@b41af142: integer cores (v3 too)
    permission=(("appCommon", True), ("appCache", True)),
    models_path='printf "%s/huggingface" ($us.appCommon | default $us.appCache | default "/tmp/catalog")',
    # the Hugging Face endpoint and token are *user* variables: the platform lists no OLARES_SYSTEM_HUGGINGFACE_*
    # (docs.olares.com developer/develop/package/environment-variables "Variable references"; docs/profiles.md)
    hf_endpoint_from="OLARES_USER_HUGGINGFACE_SERVICE", hf_token_from="OLARES_USER_HUGGINGFACE_TOKEN",
    source="Olares OlaresManifest reference 0.12.0 (https://docs.olares.com/developer/develop/package/manifest.html); "
           f"{V3_MARKET_SOURCE} scripts/validate-manifests-v3.js",
    appid=False, only_admin=False, i18n=True, llm_gateway=True, env_flags=True, per_mode=True,
)

OLARES_V2 = Profile(
    name="olares-v2", manifest_version="0.10.0", api_version="v2",
    olares_dependency=">=1.12.3-0",
    flat_resources=True, integer_cpu=True, workload_replicas=False,
    permission=(("appData", True),),
    models_path='printf "%s/models" ($us.appData | default "/tmp/catalog")',  # the maintainer's appData/models
    hf_endpoint_from="OLARES_USER_HUGGINGFACE_SERVICE", hf_token_from="OLARES_USER_HUGGINGFACE_TOKEN",
    source=f"{MARKET_SOURCE} CLAUDE.md, */OlaresManifest.yaml, scripts/build-catalog.js",
)

OLARES_V3_ONE_MODE = replace(OLARES_V3, per_mode=False)  # olares-v3 with one accelerator entry (docs/devices.md)

PROFILES: dict[str, Profile] = {p.name: p for p in (OLARES_V2, OLARES_V3)}
DEFAULT = PROFILES[DEFAULT_PROFILE]


def get_profile(name: str) -> Profile:
    """A profile by name (what a publish target's `--profile` passes); UsageError names the known ones."""
    found = PROFILES.get(name)
    if found is None:
        raise UsageError(f"unknown manifest profile {name!r}; known: {', '.join(sorted(PROFILES))}")
    return found


__all__ = ["DEFAULT", "V3_MARKET_SOURCE", "OLARES_V2", "OLARES_V3", "OLARES_V3_ONE_MODE", "PROFILES", "Profile",
           "get_profile"]
