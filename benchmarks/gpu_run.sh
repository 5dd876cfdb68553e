#!/bin/bash
# One device call (the `device` tool): calibrate and check-local on a CUDA GPU. Run from the root of the tree the
# tool sends, with .devcarry/calib carried (src/, configs, wheels for pydantic). Every stage logs to $OUT/log.txt;
# a failed stage does not stop the others. Usage: bash .devcarry/calib/gpu_run.sh [smoke|full|check]
set -u
D=.devcarry/calib
MODE=${1:-full}
export PYTHONPATH=/tmp/site:$D/src PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $D/whl/*.whl >/dev/null 2>&1
LOG=$OUT/log.txt
TM="python3 $D/tm.py"
mkdir -p /tmp/res
run() { echo "== $(date -u +%T) $*" >>$LOG; timeout ${T:-300} "$@" >>$LOG 2>&1; echo "rc $? $(date -u +%T)" >>$LOG; }
{ date -u; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem,power.limit --format=csv;
  python3 -c "import torch, numpy, pydantic, typer, rich, yaml; print(torch.__version__, torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0), pydantic.__version__)"; } >>$LOG 2>&1
[ "$MODE" = smoke ] && T=150 run python3 $D/smoke.py /tmp/res/smoke.yaml $D/tests/data/tiny-moe8-config.json
[ "$MODE" != smoke ] || grep -q "^smoke ok" $LOG || { echo "smoke failed: stopping" >>$LOG; exit 1; }
[ "$MODE" = smoke ] && exit 0
if [ "$MODE" = full ]; then
  T=420 run $TM calibrate --out $OUT/profile-h100.yaml --json
  cp $OUT/profile-h100.yaml /tmp/res/ 2>/dev/null
fi
P=${PROFILE:-$OUT/profile-h100.yaml}
[ -f "$P" ] || P=$D/profile-h100.yaml
CHECKS=${CHECKS:-val-dense-gqa:bf16 val-moe-8x2:bf16 val-dense-gqa:fp16 val-moe-8x2:fp16 val-mqa:bf16 llama-1b:bf16 val-dense-small:fp32}
T=60 run python3 $D/host_probe.py
for spec in $CHECKS; do
  cfg=${spec%%:*}; prec=${spec##*:}
  f=$D/configs/$cfg.json; [ -f $f ] || f=$D/configs/$cfg-config.json
  T=150 run $TM check-local $f --profile $P --precision $prec --batch 1,4,16,64 --context 256,1024,2048,4096 \
    --rounds ${ROUNDS:-5} --csv /tmp/res/check-$cfg-$prec.csv
  (cd /tmp/res && tar czf $OUT/results.tgz .)
done
T=60 run python3 $D/host_probe.py
(cd /tmp/res && tar czf $OUT/results.tgz .) && ls -la /tmp/res >>$LOG
# the same on the host CPU, two cores (CUDA hidden), for a CPU other than the project's own
if [ "${CPU:-1}" = 1 ]; then
  export CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=2
  TC="taskset -c 2,3 python3 $D/tm.py"
  { lscpu | head -20; } >>$LOG 2>&1
  T=240 run $TC calibrate --out $OUT/profile-hostcpu.yaml
  cp $OUT/profile-hostcpu.yaml /tmp/res/ 2>/dev/null
  for spec in ${CPU_CHECKS:-dev-dense:bf16 dev-moe:bf16 val-dense-gqa:bf16 val-moe-8x2:bf16 val-mqa:fp32 val-dense-small:fp32}; do
    cfg=${spec%%:*}; prec=${spec##*:}
    T=120 run $TC check-local $D/configs/$cfg.json --profile $OUT/profile-hostcpu.yaml --precision $prec \
      --batch 1,4,16,64 --context 256,1024,2048 --rounds 3 --csv /tmp/res/cpu-$cfg-$prec.csv
    (cd /tmp/res && tar czf $OUT/results.tgz .)
  done
  (cd /tmp/res && tar czf $OUT/results.tgz .)
fi
