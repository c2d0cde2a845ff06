"""Name evidence: how much of each tool's own name, and of its server's name, a query says.

A tool's name is the one piece of its text that its publisher chose to identify it
(``get_current_weather``, ``git_log``), and a server's name often is the product a user names
("in Notion", "on GitHub"). BM25 over the whole card spreads those words among many others;
this channel looks at them alone: per tool, the share of its name's distinct tokens (the
lexical tokenizer's, so ``listPullRequests`` meets "list pull requests") that the query holds,
and per server the same for the server's name without the words that never name a product
(the card generator's ``NOT_PRODUCT``: ``mcp``, ``server``, ``py`` ...). Built from the tool ids
on first use (nothing is stored on disk).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from cartograph.index.lexical import tokenize


class _Postings:
    """token -> positions, and each position's number of distinct tokens."""

    def __init__(self, names: Sequence[frozenset[str]]) -> None:
        postings: dict[str, list[int]] = defaultdict(list)
        for i, tokens in enumerate(names):
            for token in tokens:
                postings[token].append(i)
        self._postings = {t: np.asarray(p, dtype=np.int64) for t, p in postings.items()}
        self._sizes = np.asarray([max(1, len(t)) for t in names], dtype=np.float32)

    def share(self, query_tokens: frozenset[str]) -> np.ndarray:
        """Per position, the share of its tokens that ``query_tokens`` holds."""
        out = np.zeros(len(self._sizes), dtype=np.float32)
        for token in query_tokens:
            rows = self._postings.get(token)
            if rows is not None:
                out[rows] += 1.0
        return out / self._sizes


class NameMatch:
    """The name channel of an index (:meth:`shares`)."""

    def __init__(
        self, tool_ids: Sequence[tuple[str, str]], servers: Sequence[str], tool_server: np.ndarray
    ) -> None:
        # the card generator's word list, imported here: a serving process that never weighs
        # this channel does not load the generator's modules
        from cartograph.generate.bootstrap.lexicon import NOT_PRODUCT

        self._tools = _Postings([frozenset(tokenize(tool)) for _, tool in tool_ids])
        self._servers = _Postings([frozenset(tokenize(s)) - NOT_PRODUCT for s in servers])
        self._tool_server = tool_server

    def shares(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Per tool, the share of its name's tokens that ``query`` holds, and the same for its
        server name's product words."""
        said = frozenset(tokenize(query))
        return self._tools.share(said), self._servers.share(said)[self._tool_server]
