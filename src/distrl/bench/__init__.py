"""``distrl bench``: every system on one code base and one machine, with both system and learning figures.

The field has throughput papers that each measure one slice (Sample Factory, SEED, EnvPool) and learning-curve
suites that measure another (Open RL Benchmark, rliable); the design survey we follow names the lack of a
unified benchmark of distributed RL systems as an open problem. A bench run trains each cell of a suite
(``suite``), measures the machine's ceiling for it in the same run (``ceiling``), watches the run from outside
(``cell``), runs peers beside it where they install (``peers``), and writes a markdown report, a JSON file and
plots (``report``) with the machine they ran on (``machine``); seeds' spread in ``stats``; ``runner`` runs the cells
one after another.
"""

from distrl.bench.runner import run_bench

__all__ = ["run_bench"]
