"""PyTorch networks: MLP and Nature-CNN torsos, actor-critic and Q heads, R2D2's LSTM Q network, DDPG's actor and
critic, QT-Opt's continuous-action Q, the observation and value (PopArt) normalisers, flat weights and the device."""

from distrl.models.actor_critic import ActorCritic
from distrl.models.continuous_q import ContinuousQ
from distrl.models.ddpg import DDPGNets
from distrl.models.flat import FlatParameters, flat_tensor, load_flat, to_flat
from distrl.models.lstm import LSTMCore
from distrl.models.q_networks import QNetwork
from distrl.models.recurrent_q import RecurrentQNetwork
from distrl.models.torsos import MLPTorso, NatureCNN, make_torso

__all__ = ["ActorCritic", "ContinuousQ", "DDPGNets", "FlatParameters", "flat_tensor", "LSTMCore", "MLPTorso",
           "NatureCNN", "QNetwork", "RecurrentQNetwork", "load_flat", "make_torso", "to_flat"]
