#!/bin/bash
# before: HEAD 57674ce, R2D2 masked CartPole 1M local, seeds 0 1
cd /tmp/base
for s in 0 1; do
  d=/tmp/ab/base-s$s
  /usr/bin/time -f "wall %e s" env PYTHONPATH=/tmp/base/src python -m distrl train r2d2 --env distrl/CartPoleNoVelocity-v1 --seed $s --run-dir $d --force --quiet --json > $d.json 2> $d.time
  PYTHONPATH=/tmp/base/src python -m distrl eval $d --episodes 20 > $d.eval
done
