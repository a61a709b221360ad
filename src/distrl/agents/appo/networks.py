"""APPO's network: the actor-critic model shared by the actor-critic family (``models/actor_critic.py``)."""

from distrl.agents.impala.networks import make_model

__all__ = ["make_model"]
