"""The one error this package raises on purpose."""

from __future__ import annotations


class ParamError(ValueError):
    """Parameters refused by a schema, a kernel's cross-field rule or the experiment table (docs/reliability.md,
    rule 7): the message names the parameter."""
