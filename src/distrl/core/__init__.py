"""The vocabulary between systems and runtimes: a system's program of roles and services (``program``), what
components and service handles promise (``protocols``), what a system module provides (``system``) and array specs
(``types``)."""

