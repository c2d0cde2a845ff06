"""The deterministic operator generator (``--generator bootstrap``).

:mod:`.generator` assembles a card from a recorded server; :mod:`.tool` writes each tool's text,
:mod:`.server` the server's, :mod:`.schema` reads input schemas and builds example arguments,
:mod:`.digest` restates a publisher description in the operator's words, :mod:`.lexicon` holds
the word lists they share.
"""
