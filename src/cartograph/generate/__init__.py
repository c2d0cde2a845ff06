"""Card generators: the operator's text for each server and tool, and the one attest path.

:mod:`~cartograph.generate.bootstrap` is the deterministic generator,
:mod:`~cartograph.generate.llm` the operator's OpenAI-compatible one; both turn a recorded server
into an UNSIGNED card. :mod:`~cartograph.generate.attest` is where generation, sealing and writing
meet: the CLI's ``bootstrap`` and ``rift --regenerate`` both go through it.

:data:`GENERATORS` names them here, where the CLI can list them without importing either."""

from __future__ import annotations

from typing import Literal, get_args

GeneratorName = Literal["bootstrap", "llm"]
"""Who writes the card text: the deterministic operator generator, or the operator's LLM."""
GENERATORS: tuple[GeneratorName, ...] = get_args(GeneratorName)
