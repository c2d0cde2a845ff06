"""Card generators: the operator's text for each server and tool, and the one attest path.

:mod:`~cartograph.generate.bootstrap` is the deterministic generator,
:mod:`~cartograph.generate.llm` the operator's OpenAI-compatible one; both turn a recorded server
into an UNSIGNED card. :mod:`~cartograph.generate.attest` is where generation, sealing and writing
meet: the CLI's ``bootstrap`` and ``rift --regenerate`` both go through it.

:data:`GENERATORS` names them here, where the CLI can list them without importing either."""

GENERATORS = ("bootstrap", "llm")
