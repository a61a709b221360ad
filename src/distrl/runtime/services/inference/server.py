"""SEED RL's central inference (Espeholt et al. 2019, arXiv:1910.06591, section 3): the policy lives
only here; env actors send observations and get actions back.

This module is the part with no transport and no algorithm in it:

- it keeps, per actor slot and env, the **recurrent state** (reset where an episode starts), so a
  recurrent policy sees one continuous stream per env no matter how requests are batched;
- it **assembles unrolls** on the server side: the observation, the action and whatever else the
  policy returns (e.g. the behaviour log-probability V-trace needs), then the reward and episode-end
  flags that arrive with the actor's next request; every ``unroll_length`` actions per slot an unroll
  shaped exactly like an IMPALA actor's is handed to the learner;
- it counts episodes and the inference statistics (batch sizes, round-trip latency, actor idle time).

Everything is vectorised over the requests of a batch (fancy indexing into ``[slot, time, env]``
arrays); the only Python loop is over unrolls completed by a batch, to copy each out once.
Transports (``local.py``, ``grpc.py``, ``inline.py`` here) fill the request arrays and deliver actions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from distrl.core.program import served_unroll_spec
from distrl.core.types import ArraySpec


class InferencePolicy(Protocol):
    """What the server needs of a policy. ``outputs`` names per-env outputs (``actions`` first);
    ``state_spec`` is the per-env recurrent state (``None`` for a feed-forward policy); ``slots`` says whose
    observations a batch holds (a per-env exploration rate needs it). ``version`` is read after each call: the
    weights that acted (a policy may swap in waiting weights inside the call). ``set_weights`` is handed an
    array no one writes again (the services copy the learner's buffer): a policy may keep it to load later."""

    outputs: dict[str, ArraySpec]
    state_spec: ArraySpec | None
    version: int

    def __call__(self, obs: np.ndarray, state: np.ndarray | None,
                 slots: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray | None]: ...

    def initial_state(self, n: int) -> np.ndarray: ...

    def set_weights(self, flat: np.ndarray, version: int) -> None: ...


@dataclass(frozen=True)
class RequestSpec:
    """What one actor sends per step: the observations of its ``num_envs`` envs, the reward and
    episode-end flags of its previous step, two timings (previous round trip, env time), and ``final``:
    the actor's last request, which only completes its unroll (a retired actor's, ``EnvActor.finish``)."""

    obs: ArraySpec
    num_envs: int

    def arrays(self) -> dict[str, ArraySpec]:
        E = self.num_envs
        return {"obs": ArraySpec((E,) + self.obs.shape, self.obs.dtype), "rewards": ArraySpec((E,), "float32"),
                "terminated": ArraySpec((E,), "bool"), "truncated": ArraySpec((E,), "bool"),
                "timings": ArraySpec((2,), "float64"), "final": ArraySpec((1,), "bool")}


class InferenceServer:
    def __init__(self, policy: InferencePolicy, obs: ArraySpec, num_slots: int, num_envs: int, unroll_length: int,
                 emitter=None):
        """``emitter(unroll, info) -> (output, info)``: what a completed unroll becomes (by default itself), applied
        in :meth:`take`, which transports call after the batch's actions went out."""
        self.policy, self.emitter = policy, emitter
        self.S, self.E, self.T = num_slots, num_envs, unroll_length
        self.spec = served_unroll_spec(obs, policy.outputs, policy.state_spec, num_envs, unroll_length)
        # unrolls under construction, one per slot: [slot] + unroll shape
        self.building = {k: s.empty((num_slots,)) for k, s in self.spec.items()}
        self.t = np.zeros(num_slots, dtype=np.int64)  # actions taken in the current unroll
        self.pending = np.zeros(num_slots, dtype=bool)  # an action is out, its reward not yet back
        self.restarted = np.zeros(num_slots, dtype=bool)  # the slot's current unroll opens a new stream
        self.prev_done = np.zeros((num_slots, num_envs), dtype=bool)
        self.ep_return = np.zeros((num_slots, num_envs), dtype=np.float64)
        self.ep_length = np.zeros((num_slots, num_envs), dtype=np.int64)
        st = policy.state_spec
        self.state = None if st is None else st.empty((num_slots, num_envs))
        self.completed: list[tuple[dict[str, np.ndarray], dict[str, Any]]] = []
        self._finished_r: list[np.ndarray] = []
        self._finished_l: list[np.ndarray] = []
        self._stats = _Stats()  # since the last stats() call
        self.totals = _Stats()  # the whole run
        self.unrolls_dropped = 0
        self._since_take = _Stats()  # env and inference seconds, handed out with the next unrolls

    def serve(self, slots: np.ndarray, obs: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
              truncated: np.ndarray, timings: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """One batched step for the requesting ``slots`` (distinct): record the previous step's outcome,
        run the policy once on all their observations, record and return its outputs (``[n, E, ...]``)."""
        slots = np.asarray(slots, dtype=np.int64)
        b = self.building
        fresh = ~self.pending[slots]
        episode_start = np.zeros((len(slots), self.E), dtype=bool)
        if (~fresh).any():
            episode_start[~fresh] = self._record_outcome(slots[~fresh], obs[~fresh], rewards[~fresh],
                                                         terminated[~fresh], truncated[~fresh])
        if fresh.any():  # a new or reconnected actor: a fresh unroll, fresh episodes, fresh state
            s = slots[fresh]
            self.t[s] = 0
            self.prev_done[s] = False
            self.ep_return[s] = 0.0
            self.ep_length[s] = 0
            self.restarted[s] = True
            episode_start[fresh] = True
            b["obs"][s, 0] = obs[fresh]  # everyone else's observation was stored with its outcome
        state = None
        if self.state is not None:
            if episode_start.any():
                starts = np.nonzero(episode_start)
                self.state[slots[starts[0]], starts[1]] = self.policy.initial_state(len(starts[0]))
            state = self.state[slots]
            first = self.t[slots] == 0
            b["initial_state"][slots[first]] = state[first]
        t = self.t[slots]
        t0 = time.perf_counter()
        out, new_state = self.policy(obs, state, slots)
        infer_s = time.perf_counter() - t0
        for k in self.policy.outputs:
            b[k][slots, t] = out[k]
        # an unroll's version: the weights of its first step, known after the call (a policy may swap them in there)
        b["version"][slots[t == 0]] = self.policy.version
        if new_state is not None:
            self.state[slots] = new_state
        self.t[slots] = t + 1
        self.pending[slots] = True
        for st in (self._stats, self.totals, self._since_take):
            st.add_batch(len(slots), infer_s, timings)
        return out

    def _record_outcome(self, s: np.ndarray, obs, rewards, terminated, truncated) -> np.ndarray:
        """Store the reward/flags of each slot's last action and the observation that followed; emit
        the unrolls that are now complete. Returns where a new episode starts (``[n, E]``)."""
        b, ti = self.building, self.t[s] - 1
        valid = ~self.prev_done[s]
        done = (terminated | truncated) & valid
        b["rewards"][s, ti] = rewards
        b["terminated"][s, ti] = terminated
        b["truncated"][s, ti] = truncated
        b["valid"][s, ti] = valid
        b["obs"][s, ti + 1] = obs
        self.prev_done[s] = done
        # episode bookkeeping (the reset step after an episode end is invalid and not counted)
        self.ep_return[s] += rewards * valid
        self.ep_length[s] += valid
        if done.any():
            self._finished_r.append(self.ep_return[s][done])
            self._finished_l.append(self.ep_length[s][done])
            rows, cols = np.nonzero(done)
            self.ep_return[s[rows], cols] = 0.0
            self.ep_length[s[rows], cols] = 0
        for slot in s[self.t[s] == self.T]:
            self._complete(int(slot))
        return ~valid  # the step just recorded was a reset step: this observation opens an episode

    def _complete(self, slot: int) -> None:
        b = self.building
        unroll = {k: a[slot].copy() for k, a in b.items()}
        info = {"env_steps": self.T * self.E, "version": int(b["version"][slot, 0]), "slot": slot,
                "restarted": bool(self.restarted[slot])}
        self.restarted[slot] = False
        self.completed.append((unroll, info))
        b["obs"][slot, 0] = b["obs"][slot, self.T]
        self.t[slot] = 0

    def finish(self, slots: np.ndarray, obs: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
               truncated: np.ndarray) -> None:
        """Retired actors' last requests (``final``, ``EnvActor.finish``): the outcome of each one's last step is
        recorded, completing its unroll, and no new step begins; an unroll still short of ``unroll_length`` steps
        is discarded (counted). The actor leaves next, with nothing of it pending."""
        s = np.asarray(slots, dtype=np.int64)
        held = self.pending[s]  # a slot with nothing pending (its actor never asked, or left) has no unroll to end
        s = s[held]
        if len(s):
            self._record_outcome(s, obs[held], rewards[held], terminated[held], truncated[held])
            self.unrolls_dropped += int((self.t[s] > 0).sum())
            self.pending[s] = False
            self.t[s] = 0

    def drop(self, slot: int) -> None:
        """The actor in ``slot`` left: its partial unroll and unfinished episodes are discarded (counted)."""
        if self.pending[slot] and self.t[slot] > 0:
            self.unrolls_dropped += 1
        self.pending[slot] = False
        self.t[slot] = 0

    def take(self) -> list[tuple[dict[str, np.ndarray], dict[str, Any]]]:
        """Completed unrolls with their info; episodes finished since the last call ride on the first."""
        done, self.completed = self.completed, []
        if self.emitter is not None:  # here, after the actions went out, not while actors wait for them
            done = [self.emitter(unroll, info) for unroll, info in done]
        if done and self._finished_r:
            done[0][1]["episode_returns"] = np.concatenate(self._finished_r)
            done[0][1]["episode_lengths"] = np.concatenate(self._finished_l)
            self._finished_r, self._finished_l = [], []
        if done:
            done[0][1]["env_s"], done[0][1]["infer_s"] = self._since_take.env_s, self._since_take.infer_s
            self._since_take = _Stats()
        for _, info in done:
            info.setdefault("episode_returns", np.zeros(0))
            info.setdefault("episode_lengths", np.zeros(0, dtype=np.int64))
        return done

    def stats(self, whole_run: bool = False) -> dict[str, float]:
        """Inference statistics since the last call (or over the whole run): batch size in observations,
        round-trip latency percentiles as the actors measure them, actor idle fraction."""
        if whole_run:
            return self.totals.summary(self.E)
        s, self._stats = self._stats, _Stats()
        return s.summary(self.E)


class _Samples:
    """At most ``cap`` values kept as a uniform random sample of all added (for percentiles over a run
    of any length in bounded memory)."""

    def __init__(self, cap: int = 50_000):
        self.cap, self.parts, self.size = cap, [], 0
        self.rng = np.random.default_rng(0)

    def add(self, values: np.ndarray) -> None:
        self.parts.append(values)
        self.size += values.size
        if self.size > 2 * self.cap:  # thin out; every value seen so far stays equally likely to be kept
            kept = self.rng.choice(np.concatenate(self.parts), self.cap, replace=False)
            self.parts, self.size = [kept], self.cap

    def values(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.zeros(0)


class _Stats:
    def __init__(self):
        self.forwards = 0
        self.requests = 0
        self.batches = _Samples()
        self.rtts = _Samples()
        self.env_s = 0.0
        self.wait_s = 0.0
        self.infer_s = 0.0

    def add_batch(self, n: int, infer_s: float, timings: np.ndarray | None) -> None:
        self.forwards += 1
        self.requests += n
        self.infer_s += infer_s
        self.batches.add(np.array([n]))
        if timings is not None:
            rtt = timings[:, 0]
            self.rtts.add(rtt[rtt > 0])
            self.wait_s += float(rtt.sum())
            self.env_s += float(timings[:, 1].sum())

    def summary(self, num_envs: int) -> dict[str, float]:
        if not self.forwards:
            return {}
        out = {"inference_batch_mean": self.requests / self.forwards * num_envs,
               "inference_batch_p50": float(np.median(self.batches.values())) * num_envs,
               "inference_forwards": float(self.forwards), "inference_s": self.infer_s}
        rtt = self.rtts.values()
        if rtt.size:
            out["latency_p50_ms"] = float(np.percentile(rtt, 50) * 1e3)
            out["latency_p99_ms"] = float(np.percentile(rtt, 99) * 1e3)
        busy = self.env_s + self.wait_s
        if busy > 0:
            out["actor_idle_frac"] = self.wait_s / busy
            out["actor_env_s"] = self.env_s
        return out
