"""Lexical evidence: the tokenizer both lexical channels share, BM25 (bm25s) and Jaccard.

The tokenizer lower-cases, splits camelCase, snake_case, kebab-case and dotted names, keeps
CJK characters one by one, drops a short English stop-word list and folds plain plurals, so
``listPullRequests`` and "list pull requests" meet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

STOP_WORDS = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto about as is are
    was were be been being it its this that these those i me my we our you your he she they them
    their there here what which who whom whose when where why how all any some such no not only
    own same so than too very can could will would should shall may might must do does did done
    have has had having just also via per each other more most using use used please want need
    get make let s t""".split()  # noqa: SIM905
)


def _fold(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Word tokens of ``text`` for lexical matching (order kept, duplicates kept)."""
    spaced = _CAMEL.sub(" ", text)
    return [_fold(w) for w in _WORD.findall(spaced.lower()) if w not in STOP_WORDS]


def token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def jaccard_scores(query: str, doc_tokens: Sequence[frozenset[str]]) -> np.ndarray:
    """Jaccard similarity of the query's token set with each document's token set."""
    q = token_set(query)
    out = np.zeros(len(doc_tokens), dtype=np.float32)
    if not q:
        return out
    for i, d in enumerate(doc_tokens):
        union = len(q | d)
        if union:
            out[i] = len(q & d) / union
    return out


class Lexical:
    """A BM25 index (bm25s, Lucene variant) over the tokenized documents."""

    def __init__(self, bm25: bm25s.BM25) -> None:
        self._bm25 = bm25

    @classmethod
    def build(cls, texts: Iterable[str]) -> Lexical:
        corpus = [tokenize(t) or ["_empty_"] for t in texts]
        bm25 = bm25s.BM25()
        bm25.index(corpus, show_progress=False)
        return cls(bm25)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when no token is known)."""
        vocab = self._bm25.vocab_dict
        tokens = [t for t in tokenize(query) if t in vocab]
        n = int(self._bm25.scores["num_docs"])
        if not tokens:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)

    def save(self, directory: Path) -> list[Path]:
        """Write the bm25s files (JSON + .npy, no pickle) and return their paths."""
        directory.mkdir(parents=True, exist_ok=True)
        self._bm25.save(str(directory), show_progress=False, allow_pickle=False)
        return sorted(p for p in directory.iterdir() if p.is_file())

    @classmethod
    def load(cls, directory: Path) -> Lexical:
        bm25 = bm25s.BM25.load(str(directory), allow_pickle=False, show_progress=False)
        return cls(bm25)
