#!/bin/bash
# SEED + R2D2 at 00828b5 (R2D2's evaluation default), the masked CartPole, 1M env steps, local, seeds 0-3; each run
# played by distrl eval with its best evaluated weights and with its last checkpoint.
#   git worktree add ../new2 00828b5 && bash run.sh ../new2 OUT
TREE=$(realpath "$1") OUT=$(realpath "$2")
cd "$TREE"
for s in 0 1 2 3; do
  d=$OUT/seed-s$s
  /usr/bin/time -f "wall %e s" env PYTHONPATH=$TREE/src python -m distrl train seed-r2d2 \
    --env distrl/CartPoleNoVelocity-v1 --seed $s --run-dir $d --force --quiet --json > $d.json 2> $d.time
  PYTHONPATH=$TREE/src python -m distrl eval $d --episodes 20 > $d.best
  PYTHONPATH=$TREE/src python -m distrl eval $d --episodes 20 --snapshot last > $d.last
done
