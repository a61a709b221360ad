"""``echo_team.py``'s game cut at its round limit: ``pettingzoo:tests.envs.echo_team_timed``."""

from tests.envs.echo_team import TimedEchoTeam as parallel_env  # noqa: F401
