"""Whether a model adapter may run code that ships with a checkpoint (``trust_remote_code``): only when the user
says so, and never for the families that load transformers' own classes. The speech-LLM base and the remote-code
adapters both ask here, so neither needs the other.
"""

from __future__ import annotations

from typing import Any

from s2sbench.pipeline.core.errors import ConfigError


class RemoteCodeRefused(ConfigError):
    """A family needs code from its hub repository or GitHub checkout and the user did not allow it."""


def require_remote_code(trust_remote_code: bool, adapter: str, what: str) -> None:
    """Refuse to load ``what`` unless the user passed ``trust_remote_code=True``: that code runs with the user's
    rights, so running it is the user's explicit decision, never a default."""
    if trust_remote_code is not True:  # only an explicit True: a string such as 'false' is truthy
        raise RemoteCodeRefused(f"{adapter} runs code shipped with {what}; read it, then pass "
                                "trust_remote_code=True (CLI: --model-arg trust_remote_code=true) to allow it")


def without_remote_code(adapter: str, model_class: str, options: dict[str, Any]) -> dict[str, Any]:
    """The loading options of a family that runs only transformers' own classes: ``trust_remote_code`` from the
    user is refused (a checkpoint needing its own code goes through the remote-code adapter and its gate above), and
    is passed as False, so a processor or config of the checkpoint that names its own code never runs it."""
    if "trust_remote_code" in options:
        raise RemoteCodeRefused(f"{adapter} loads {model_class} from transformers and runs no code of the checkpoint; "
                                "drop trust_remote_code (a checkpoint with its own code: use the remote-code adapter)")
    return {**options, "trust_remote_code": False}
