"""User-facing errors.

Anything the user can fix by changing a command line, a config file or an env id raises
:class:`ConfigError`. The CLI turns it into one line on stderr and exit code 2, with no
traceback; library callers get an ordinary exception they can catch.
"""


class ConfigError(ValueError):
    """Bad user input: the message says what was wrong and what is valid."""


class CheckpointNotWritten(OSError):
    """A checkpoint could not be written (a full disk, a vanished folder): its half-written files are gone and the
    previous checkpoints are as they were; the message says which and why."""


class RunStopped(RuntimeError):
    """A run that cannot go on (its learner keeps getting non-finite values, an actor keeps crashing): the
    message says why and what was kept; the CLI prints it as one line and exits with code 1."""
