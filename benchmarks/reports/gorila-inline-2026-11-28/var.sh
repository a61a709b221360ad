#!/bin/bash
# usage: var.sh system env runtime steps seed [--set k=v ...]; prints wall, training mean, greedy eval
sys=$1; env=$2; rt=$3; steps=$4; seed=$5; shift 5
d=${TMPDIR:-/tmp}/var-$sys-$rt-$seed-$RANDOM
out=$(distrl train $sys --env $env --runtime $rt --seed $seed --run-dir $d --quiet --set total_steps=$steps "$@" 2>&1 | tail -1)
ev=$(distrl eval $d --episodes 20 2>&1 | tail -1)
curve=$(python - "$d" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/metrics.csv")))
vals = [v for v in (float(r.get("episode_return_mean") or "nan") for r in rows) if v == v]  # no nan (no episode yet)
idx = [round(i * (len(vals) - 1) / 9) for i in range(10)] if vals else []
print([round(vals[i]) for i in idx])
PY
)
echo "$sys $env $rt $steps seed$seed $* | $(echo $out | python -c "import json,sys; d=json.loads(sys.stdin.read()); print(d['wall_s'], d['episode_return_mean'])" 2>/dev/null) | eval $(echo $ev | python -c "import json,sys; d=json.loads(sys.stdin.read()); print(d['mean_return'], d['min_return'])" 2>/dev/null) | $curve"
rm -rf $d
