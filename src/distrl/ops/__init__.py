"""Pure RL math on torch tensors (time-major ``[T, B]``) and numpy arrays: no I/O, no processes. Returns and
bootstrap targets, V-trace, value rescaling, loss terms, replay priorities, CEM, and the rules of ES, PBT and
leagues."""

from distrl.ops._checks import all_finite
from distrl.ops.cem import cem_maximize, clipped_double_q_target
from distrl.ops.es import NoiseTable, centered_ranks, es_gradient
from distrl.ops.losses import (
                                baseline_loss,
                                clipped_surrogate_loss,
                                entropy_loss,
                                large_margin_loss,
                                policy_gradient_loss,
                                standardised,
)
from distrl.ops.pbt import truncation_source
from distrl.ops.priorities import (
                                epsilon_ladder,
                                importance_weights,
                                per_priority,
                                sequence_priority,
)
from distrl.ops.returns import (
                                ddpg_critic_target,
                                double_q_n_step_targets,
                                double_q_target,
                                gae,
                                lambda_returns,
                                n_step_returns,
                                td_error,
                                trainable_steps,
)
from distrl.ops.value_rescale import (
                                advantage_learning_target,
                                transformed_double_q_target,
                                transformed_n_step_q_target,
                                value_rescale,
                                value_rescale_inv,
)
from distrl.ops.vtrace import VTraceReturns, vtrace

__all__ = ["NoiseTable", "VTraceReturns", "advantage_learning_target", "all_finite", "baseline_loss",
           "cem_maximize", "centered_ranks", "clipped_double_q_target", "clipped_surrogate_loss", "ddpg_critic_target",
           "double_q_n_step_targets", "double_q_target", "entropy_loss", "epsilon_ladder", "es_gradient", "gae",
           "importance_weights", "lambda_returns", "large_margin_loss", "n_step_returns",
           "per_priority", "policy_gradient_loss", "sequence_priority", "standardised", "td_error", "trainable_steps",
           "transformed_double_q_target", "transformed_n_step_q_target", "truncation_source", "value_rescale",
           "value_rescale_inv", "vtrace"]
