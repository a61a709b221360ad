"""Settings declared once for every system: what their help promises is what each system's build does."""

import dataclasses
import importlib
import pkgutil

import pytest

import distrl.agents
from distrl.agents.common.settings import atari_reward_clip
from distrl.agents.registry import SYSTEMS, get_system
from distrl.core.system import BuildContext
from distrl.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class _Clip:
    reward_clip: float | None = None


def test_atari_reward_clip_defaults_ale_ids_only_and_keeps_a_set_value():
    assert atari_reward_clip(_Clip(), "ALE/Pong-v5").reward_clip == 1.0
    assert atari_reward_clip(_Clip(), "CartPole-v1").reward_clip is None
    assert atari_reward_clip(_Clip(), "distrl/CartPoleNoVelocity-v1").reward_clip is None
    assert atari_reward_clip(_Clip(5.0), "ALE/Pong-v5").reward_clip == 5.0


def test_every_system_with_a_reward_clip_applies_the_atari_default(monkeypatch):
    """``reward_clip``'s help says "ALE/ ids default to 1": every system that has the setting and takes an ALE env
    applies it in its build (GORILA did not until 2026-11-29; systems for Box actions refuse ALE envs instead)."""
    pytest.importorskip("ale_py", reason="atari extra not installed")
    from distrl.envs import env_spec

    seen = []

    def recording(cfg, env_id):
        seen.append(env_id)
        return atari_reward_clip(cfg, env_id)

    for info in pkgutil.walk_packages(distrl.agents.__path__, "distrl.agents."):
        module = importlib.import_module(info.name)
        if getattr(module, "atari_reward_clip", None) is atari_reward_clip:
            monkeypatch.setattr(module, "atari_reward_clip", recording)
    ctx = BuildContext("ALE/Pong-v5", env_spec("ALE/Pong-v5"), total_steps=1000)
    applied, refused = [], []
    for system in SYSTEMS:
        module = get_system(system)
        if "reward_clip" not in {f.name for f in dataclasses.fields(module.Config)} or system == "r2d3":
            continue  # R2D3's build is R2D2's with a demo dataset it requires
        seen.clear()
        try:
            module.build(module.Config(), ctx)
        except ConfigError as e:
            assert "action space" in str(e) or "Box" in str(e), (system, e)
            refused.append(system)
            continue
        assert seen == ["ALE/Pong-v5"], system
        applied.append(system)
    assert {"gorila", "apex-dqn", "impala", "seed", "r2d2"} <= set(applied) and "apex-ddpg" in refused
