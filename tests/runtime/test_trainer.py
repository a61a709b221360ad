"""The steppable trainer: start, step by updates or env steps, stats, the one hyperparameter mutation point,
pause, observers, close; on the deterministic inline backend and on local."""

import json
import threading

import numpy as np
import pytest
import torch

from distrl.config import build as build_config
from distrl.core.program import Channel, Hyperparameter, Program, Role, Weights
from distrl.models.device import Staging
from distrl.run_config import RunConfig
from distrl.runtime import Observer, Trainer
from tests.runtime.backends.fakes import (
    SPEC,
    CheckingLearner,
    E,
    T,
    counting_program,
    make_counting_actor,
    param_program,
)


def run_cfg(tmp_path, **kw):
    return build_config(RunConfig, dict({"total_steps": 10**6, "runtime": "inline", "run_dir": str(tmp_path)}, **kw))


class Recorder(Observer):
    def __init__(self):
        self.calls = []

    def on_start(self, trainer):
        self.calls.append("start")

    def on_row(self, trainer, row):
        self.calls.append(("row", row["env_steps"]))

    def on_close(self, trainer, summary):
        self.calls.append(("close", summary is not None))


def test_step_by_updates_and_by_env_steps(tmp_path):
    trainer = Trainer(counting_program(num_actors=2, batch=2), run_cfg(tmp_path), tmp_path, system="fake")
    trainer.start()
    try:
        stats = trainer.step(updates=5)
        assert stats["updates"] == 5  # inline: exactly one batch per update
        assert stats["env_steps"] == 5 * 2 * T * E
        stats = trainer.step(env_steps=3 * T * E)
        assert stats["env_steps"] >= 5 * 2 * T * E + 3 * T * E
        assert set(stats) >= {"env_steps", "updates", "episode_return_mean", "sps", "wall_s", "hyperparameters"}
    finally:
        summary = trainer.close()
    assert summary["learner_updates"] == trainer.updates and (tmp_path / "summary.json").is_file()


def test_a_run_stops_at_its_budget_and_observers_see_it_all(tmp_path):
    rec = Recorder()
    trainer = Trainer(counting_program(), run_cfg(tmp_path, total_steps=20 * T * E, log_interval_s=1e-9), tmp_path,
                      system="fake", observers=[rec])
    summary = trainer.run()
    assert summary["env_steps"] == 20 * T * E and not summary["interrupted"]
    assert rec.calls[0] == "start" and rec.calls[-1] == ("close", True)
    assert [c for c in rec.calls if c[0] == "row"][-1] == ("row", 20 * T * E)


def test_hyperparameters_have_one_mutation_point(tmp_path):
    trainer = Trainer(counting_program(num_actors=2, batch=1, hyper_to_components=True), run_cfg(tmp_path), tmp_path,
                      system="fake")
    trainer.start()
    try:
        assert trainer.hyperparameters == {"epsilon": 0.5}
        trainer.step(updates=2)
        trainer.set_hyperparameters(epsilon=0.125)
        with pytest.raises(KeyError, match="not a hyperparameter"):
            trainer.set_hyperparameters(lr=1.0)
        assert trainer.stats()["hyperparameters"] == {"epsilon": 0.125}
        trainer.backend.poll(0)  # inline: the next step of the next component
        for w in trainer.backend.workers:
            assert w.handle.hyper["epsilon"] == 0.125  # every component got it
    finally:
        trainer.close()


def test_schedules_scale_the_base_value_and_reach_the_parameter_server(tmp_path):
    """A linear schedule moves ``lr`` with the run's progress; set_hyperparameters changes the base it scales;
    the parameter server (a service, no learner in this program) takes each value."""
    program = param_program(num_workers=2, lr=0.1)
    program = Program(roles=program.roles, services=program.services,
                      hyperparameters={"lr": Hyperparameter(0.1, "linear")})
    trainer = Trainer(program, run_cfg(tmp_path, total_steps=1000), tmp_path, system="fake")
    trainer.start()
    try:
        shards = trainer.backend.services()["params"].shards
        trainer.step(env_steps=500)
        assert float(shards.lr) == pytest.approx(0.1 * (1 - trainer.env_steps / 1000), abs=0.1 * 10 / 1000)
        trainer.set_hyperparameters(lr=0.02)
        assert float(shards.lr) == pytest.approx(0.02 * (1 - trainer.env_steps / 1000))
    finally:
        trainer.close()


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_pause_stops_new_steps(tmp_path, runtime):
    trainer = Trainer(
        counting_program(num_actors=2, batch=1), run_cfg(tmp_path, runtime=runtime), tmp_path, system="fake"
    )
    trainer.start()
    try:
        trainer.step(updates=3)
        trainer.pause()
        for _ in range(20):  # what was granted before the pause drains...
            trainer._iterate()
        drained = trainer.env_steps
        for _ in range(20):  # ...and nothing more comes
            trainer._iterate()
        assert trainer.env_steps == drained
        trainer.pause(False)
        trainer.step(updates=2)
        assert trainer.env_steps > drained
    finally:
        trainer.close()


def test_a_checkpoint_restores_counters_hyperparameters_and_the_learners_state(tmp_path):
    program = counting_program(num_actors=1, batch=1, hyper_to_components=True)
    trainer = Trainer(program, run_cfg(tmp_path), tmp_path, system="fake")
    trainer.start()
    trainer.step(updates=4)
    trainer.set_hyperparameters(epsilon=0.3)
    folder = trainer.checkpoint()
    trainer.close()
    saved = json.loads((folder / "state.json").read_text())["counters"]
    assert saved["env_steps"] == 4 * T * E and saved["hyperparameters"] == {"epsilon": 0.3}
    again = Trainer(program, run_cfg(tmp_path), tmp_path, system="fake", resume=True)
    again.start()
    try:
        assert again.env_steps == 4 * T * E and again.hyperparameters == {"epsilon": 0.3}
    finally:
        again.close()


def test_programs_are_checked_for_undeclared_services():
    from distrl.core.program import Role

    with pytest.raises(ValueError, match="undeclared service 'weights'"):
        Program(roles=(Role("actor", print, uses=("weights",)),)).check()


# --- batches per version: a producer starts no work the learner would drop (ES's generations) ------------
class VersionActor:
    def __init__(self, index, seed, handles):
        self.index, self.weights, self.version = index, handles["weights"], -1

    def step(self, out):
        newer = self.weights.pull(self.version)
        if newer is not None:
            self.version = newer[1]
        out["version"][0] = self.version
        return {"env_steps": 1, "version": self.version, "actor_index": self.index}

    def close(self):
        pass


class GenerationLearner:
    """Updates after 3 batches made from its current version; counts the ones made from an older one."""

    def __init__(self, handles=None):
        self.version, self.got, self.stale = 0, 0, 0

    def step(self, batch):
        if int(batch["version"][0]) != self.version:
            self.stale += 1
            return None
        self.got += 1
        if self.got < 3:
            return None
        self.got, self.version = 0, self.version + 1
        return {}

    def get_weights(self):
        return np.zeros(4, np.float32)

    def checkpoint_parts(self):
        return {}, {}

    def counters(self):
        return {"version": self.version}

    def load_counters(self, c):
        pass

    def set_hyperparameters(self, values):
        pass


def generation_program(batches_per_version):
    from distrl.core.program import Channel, Role, Weights
    from distrl.core.types import ArraySpec

    spec = {"version": ArraySpec((1,), "int64", batch_axis=0)}
    actors = Role("actor", VersionActor, count=2, uses=("weights",), emits="results", output=spec, in_flight=1)
    return Program(roles=(actors,), services={"results": Channel(spec, batch=1), "weights": Weights()},
                   make_learner=GenerationLearner, consumes="results", batches_per_version=batches_per_version)


@pytest.mark.parametrize("runtime", ["local", "ray"])
def test_no_producer_starts_work_an_older_version_made_stale(tmp_path, runtime, request):
    """Two producers, three batches per version: the producer that did not close a generation waits for
    the new version instead of starting on the old weights, on every backend, and the run never stalls."""
    if runtime == "ray":
        request.getfixturevalue("local_ray")  # the suite's shared instance (skips without the ray extra)
    trainer = Trainer(generation_program(3), run_cfg(tmp_path, runtime=runtime), tmp_path, system="fake")
    trainer.start()
    try:
        trainer.step(updates=12)
        assert trainer.learner.version >= 12 and trainer.learner.stale == 0
    finally:
        trainer.close()


@pytest.mark.parametrize("system", ["a3c", "seed"])
def test_parameter_server_and_inference_traffic_count_in_bytes_moved(tmp_path, system):
    """A3C's workers exchange weights and shard updates with the parameter server, SEED's env actors send
    observations and get actions: both cross processes on local, so both count in bytes per env step."""
    import distrl

    s = distrl.train(system, env="CartPole-v1", runtime="local", num_actors=1, num_envs=4, total_steps=4000,
                     run_dir=str(tmp_path / "r"), **({"t_max": 8} if system == "a3c" else {}))
    assert s["bytes_per_env_step"] >= 16  # at least each step's observation (4 float32) crossed


class StagingLearner(CheckingLearner):
    """A learner that can take staged batches (the trainer's ``overlap_transfers``) and records the unrolls it trains
    on. Until a batch has been staged on the trainer's helper thread, each update waits (up to 0.5 s) for that to
    happen, giving the actors time to deliver the next batch before the current one's update ends."""

    def __init__(self, handles=None):
        super().__init__(handles)
        self.staging, self.staged, self.seen = Staging("cpu"), 0, []
        self.on_helper = threading.Event()

    def stage(self, arrays):
        self.staged += 1
        if threading.current_thread() is not threading.main_thread():
            self.on_helper.set()
        return self.staging.stage(arrays)

    def step(self, batch):
        b = self.staging.tensors(batch)
        self.seen += sorted({(int(a), int(s)) for a, s in zip(b["actor"], b["seq"])})
        self.on_helper.wait(0.5)
        return super().step(b)

    def device_weights(self):
        return torch.full((16,), float(self.version))


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_with_overlap_every_batch_is_staged_and_trained_on_once_in_order(tmp_path, runtime):
    """``overlap_transfers=on``: batches come staged (the next one while the current update runs), each unroll is
    trained
    on once, each actor's in the order it made them, and the weights keep reaching the actors."""
    # batches of one unroll: the 4 slots of 2 actors x 2 in flight hold the batch in training, the one ahead and
    # more (with batches of two, the one in training and the one being refilled would fill them: none ahead)
    actors = Role("actor", make_counting_actor, count=2, uses=("weights",), emits="unrolls", output=SPEC)
    program = Program(roles=(actors,), services={"unrolls": Channel(SPEC, batch=1), "weights": Weights()},
                      make_learner=StagingLearner, consumes="unrolls")
    infos = []

    class Reports(Observer):
        def on_report(self, trainer, info):
            infos.append(info)

    trainer = Trainer(program, run_cfg(tmp_path, runtime=runtime, overlap_transfers="on"), tmp_path, system="fake",
                      observers=(Reports(),))
    trainer.start()
    if runtime == "inline":
        trainer.learner.on_helper.set()  # nothing to wait for there (below)
    try:
        trainer.step(updates=20)
        learner = trainer.learner
        assert learner.version >= 20
        if runtime == "local":  # (inline steps an actor only when the learner has nothing: none is ever ahead)
            assert learner.on_helper.is_set()  # the next batch was staged while an update ran
        # every weights version an actor loaded holds what the learner had at that version (weights = version)
        loaded = [(i["version"], i["weight0"]) for i in infos if i.get("weight0") is not None]
        assert loaded and all(w == v for v, w in loaded)
        assert len(set(learner.seen)) == len(learner.seen)  # none twice
        for actor in (0, 1):
            seqs = [s for a, s in learner.seen if a == actor]
            assert seqs == list(range(len(seqs)))  # none skipped, none out of order
        # a batch waits at most for the slots ahead of it (2 actors x 2 in flight), plus one update for the
        # batch staged ahead and one for the publish that waits for the next update: a bound on every machine
        lags = trainer.ledger.all_lags()
        assert lags and max(lags) <= (1 if runtime == "inline" else 2 * 2 + 2)
    finally:
        trainer.close()
