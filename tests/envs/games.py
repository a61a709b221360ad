"""A random legal player's episodes in a two-player game env (the mask ends each observation)."""

import numpy as np


def random_play(env, episodes: int, mask_size: int, seed: int = 0) -> list[tuple[int, float]]:
    """(the learner's seat, its return) of each of ``episodes`` episodes, seeded 0, 1, ..., its moves uniformly
    random among the legal ones."""
    rng = np.random.default_rng(seed)
    results = []
    for episode in range(episodes):
        obs, info = env.reset(seed=episode)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs[-mask_size:]))))
            total, done = total + reward, terminated or truncated
        results.append((info["seat"], total))
    return results
