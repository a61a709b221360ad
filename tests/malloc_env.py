"""An environment for a child interpreter without the malloc settings a developer or CI may have set (glibc's
variables and distrl's opt-out would stand over the thresholds the tests measure)."""

import os

from distrl.runtime.allocator import OPT_OUT, USER_VARIABLES


def clean_environment(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in (*USER_VARIABLES, "GLIBC_TUNABLES", OPT_OUT)}
    return {**env, **extra}
