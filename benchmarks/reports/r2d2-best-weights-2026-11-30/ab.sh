#!/bin/bash
# The inline A/B of R2D2's evaluation default: the code before (57674ce) and after (186e563) checked out side by side,
# alternating, alone on the machine.
#   git worktree add ../base 57674ce && git worktree add ../new 186e563 && bash ab.sh ../base ../new OUT
BASE=$(realpath "$1") NEW=$(realpath "$2") OUT=$(realpath "$3")
for round in 1 2; do
  for tree in "$BASE:base" "$NEW:new"; do
    d=$OUT/ab-${tree#*:}-$round
    cd "${tree%%:*}"
    /usr/bin/time -f "wall %e s" env PYTHONPATH=${tree%%:*}/src python -m distrl train r2d2 \
      --env distrl/CartPoleNoVelocity-v1 --seed 0 --runtime inline --total-steps 200000 --run-dir $d --force --quiet \
      --json > $d.json 2> $d.time
  done
done
