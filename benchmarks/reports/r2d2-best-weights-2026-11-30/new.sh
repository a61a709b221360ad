#!/bin/bash
# after: 186e563 (R2D2 keeps its best evaluated weights), R2D2 masked CartPole 1M local, seeds 0-7;
# each run played by distrl eval with the best weights and with the last checkpoint's
cd /tmp/new
for s in 0 1 2 3 4 5 6 7; do
  d=/tmp/ab/new-s$s
  /usr/bin/time -f "wall %e s" env PYTHONPATH=/tmp/new/src python -m distrl train r2d2 --env distrl/CartPoleNoVelocity-v1 --seed $s --run-dir $d --force --quiet --json > $d.json 2> $d.time
  PYTHONPATH=/tmp/new/src python -m distrl eval $d --episodes 20 > $d.best
  PYTHONPATH=/tmp/new/src python -m distrl eval $d --episodes 20 --snapshot last > $d.last
done
