"""Pieces shared by the actor-critic systems (A2C, IMPALA, SEED): the unroll actor and loss inputs."""
