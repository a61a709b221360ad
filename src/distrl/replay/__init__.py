"""Replay data structures (no processes, no transport): storage, samplers, sum tree, adders, rate limiter."""

from distrl.replay.adders import NStepAdder
from distrl.replay.buffer import Replay, SampledBatch
from distrl.replay.partitioned import PartitionedReplay, PartitionWriter
from distrl.replay.rate_limiter import RateLimiter, Unlimited
from distrl.replay.samplers import FifoSampler, PrioritizedSampler, UniformSampler
from distrl.replay.sequence_adder import SequenceAdder
from distrl.replay.sequence_storage import SequenceStorage
from distrl.replay.storage import RingStorage
from distrl.replay.sum_tree import SumTree

__all__ = ["FifoSampler", "NStepAdder", "PartitionedReplay", "PartitionWriter", "PrioritizedSampler", "RateLimiter",
           "Replay", "RingStorage", "SampledBatch", "SequenceAdder", "SequenceStorage", "SumTree", "UniformSampler",
           "Unlimited"]
