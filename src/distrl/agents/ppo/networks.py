"""PPO's network: the actor-critic model shared by the actor-critic family (``models/actor_critic.py``)."""

from distrl.agents.a2c.networks import make_model

__all__ = ["make_model"]
