"""Population-Based Training over any distrl system whose learner runs in the trainer (Jaderberg et al.
2017): ``search`` (what may change and how), ``controller`` (asynchronous exploit/explore), ``members``
(members and the pools they train in, placed by ``runtime/backends/pools.py``), ``population`` (the command:
directory, logs, summary, resume)."""

from distrl.pbt.controller import Controller, MemberRecord
from distrl.pbt.population import run_pbt
from distrl.pbt.search import Explore

__all__ = ["Controller", "Explore", "MemberRecord", "run_pbt"]
