"""Replay data structures (no processes, no transport): ring storage (and its frame- and sequence-deduplicating
forms), samplers and the sum tree, the replay buffer, actor-side adders, the rate limiter, GORILA's shared partitioned
replay and the memory check made before allocating."""

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
