# R2D2 on the masked CartPole, inline, 200k env steps, seed 0: the code before advantage learning (88728a4) and with it
# (3bf5411), checked out side by side, alternating; prints label, wall s, env steps/s, training mean, learner updates.
#   git worktree add ../old 88728a4 && git worktree add ../new 3bf5411 && bash ab-inline-200k.sh ../old ../new
OLD=$(realpath "$1") NEW=$(realpath "$2") TMP=$(mktemp -d)
run() { # tree label settings...
  local tree=$1 label=$2; shift 2
  local t0=$(date +%s.%N)
  PYTHONPATH=$tree/src python -m distrl train r2d2 --env distrl/CartPoleNoVelocity-v1 --seed 0 --runtime inline \
    --total-steps 200000 --run-dir "$TMP/run" --force --quiet --json "$@" > "$TMP/out.json"
  local t1=$(date +%s.%N)
  python -c "import json; s=json.load(open('$TMP/out.json')); print('$label', round($t1-$t0,2), s['sps'], s['episode_return_mean'], s['learner_updates'])"
}
for round in 1 2; do
  run "$OLD" "old 88728a4"
  run "$NEW" "new 3bf5411 alpha=0" --set advantage_learning=0
  run "$NEW" "new 3bf5411 alpha=0.5 (default)"
done
