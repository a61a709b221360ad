#!/bin/bash
# Before: the code at 57674ce, R2D2 on the masked CartPole, 1M env steps, local, seeds 0 and 1, then distrl eval.
#   git worktree add ../base 57674ce && bash base.sh ../base OUT   (OUT: where the runs go; collect.py reads it)
TREE=$(realpath "$1") OUT=$(realpath "$2")
cd "$TREE"
for s in 0 1; do
  d=$OUT/base-s$s
  /usr/bin/time -f "wall %e s" env PYTHONPATH=$TREE/src python -m distrl train r2d2 --env distrl/CartPoleNoVelocity-v1 \
    --seed $s --run-dir $d --force --quiet --json > $d.json 2> $d.time
  PYTHONPATH=$TREE/src python -m distrl eval $d --episodes 20 > $d.eval
done
