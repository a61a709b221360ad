#!/bin/bash
# After: 186e563 (R2D2 keeps its best evaluated weights), the masked CartPole, 1M env steps, local, seeds 0-7; each run
# played by distrl eval with its best evaluated weights (the default) and with its last checkpoint.
#   git worktree add ../new 186e563 && bash new.sh ../new OUT
TREE=$(realpath "$1") OUT=$(realpath "$2")
cd "$TREE"
for s in 0 1 2 3 4 5 6 7; do
  d=$OUT/new-s$s
  /usr/bin/time -f "wall %e s" env PYTHONPATH=$TREE/src python -m distrl train r2d2 --env distrl/CartPoleNoVelocity-v1 \
    --seed $s --run-dir $d --force --quiet --json > $d.json 2> $d.time
  PYTHONPATH=$TREE/src python -m distrl eval $d --episodes 20 > $d.best
  PYTHONPATH=$TREE/src python -m distrl eval $d --episodes 20 --snapshot last > $d.last
done
