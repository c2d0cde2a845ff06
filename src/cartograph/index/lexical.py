"""Lexical evidence: the tokenizer both lexical channels share, BM25 and Jaccard.

The tokenizer lower-cases, splits camelCase, snake_case, kebab-case and dotted names, keeps
CJK characters one by one, drops a short English stop-word list and folds plain plurals, so
``listPullRequests`` and "list pull requests" meet.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from cartograph.errors import IndexError_

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
    """A BM25 index (Lucene variant) over the tokenized documents.

    bm25s builds it: it precomputes each (token, document) score into a sparse column per token.
    Scoring a query then only sums the columns of its tokens, which this class does with NumPy
    alone, so a process that loads a saved index (``serve``) never imports bm25s and the SciPy
    it pulls in (about 11 MB of resident memory). The files are bm25s's own (JSON + ``.npy``, no
    pickle), so either side reads what the other wrote.
    """

    def __init__(
        self,
        vocab: dict[str, int],
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        num_docs: int,
        params: dict[str, object],
    ) -> None:
        self._vocab = vocab
        self._data = data
        self._indices = indices
        self._indptr = indptr
        self._num_docs = num_docs
        self._params = params

    @classmethod
    def build(cls, texts: Iterable[str]) -> Lexical:
        import bm25s  # building only: its SciPy import costs a serving process ~11 MB

        corpus = [tokenize(t) or ["_empty_"] for t in texts]
        bm25 = bm25s.BM25()
        bm25.index(corpus, show_progress=False)
        scores = bm25.scores
        params = {
            "k1": bm25.k1,
            "b": bm25.b,
            "delta": bm25.delta,
            "method": bm25.method,
            "idf_method": bm25.idf_method,
            "dtype": str(bm25.dtype),
            "int_dtype": str(bm25.int_dtype),
            "num_docs": int(scores["num_docs"]),
            "version": bm25s.__version__,
            "backend": "numpy",
        }
        return cls(
            dict(bm25.vocab_dict),
            np.asarray(scores["data"]),
            np.asarray(scores["indices"]),
            np.asarray(scores["indptr"]),
            int(scores["num_docs"]),
            params,
        )

    @property
    def num_docs(self) -> int:
        return self._num_docs

    def _columns(self, tokens: Iterable[str]) -> list[slice]:
        """The stored range of each known token's column, in order (unknown tokens, and
        bm25s's own empty token, which has no column, are left out)."""
        out = []
        for token in tokens:
            column = self._vocab.get(token)
            if column is not None and column + 1 < len(self._indptr):
                out.append(slice(int(self._indptr[column]), int(self._indptr[column + 1])))
        return out

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when no token is known): the sum,
        over the query's tokens in order (a repeated token counts again), of its column."""
        out = np.zeros(self._num_docs, dtype=np.float32)
        for rows in self._columns(tokenize(query)):
            out[self._indices[rows]] += self._data[rows]  # rows of one column are distinct
        return out

    def coverage(self, query: str) -> np.ndarray:
        """Per document, the share of the query's distinct indexed tokens that it holds (zeros
        when the index knows none of them): how much of the request a tool's text speaks to,
        which BM25's saturating, idf-weighted sum does not show."""
        out = np.zeros(self._num_docs, dtype=np.float32)
        known = self._columns(dict.fromkeys(tokenize(query)))
        for rows in known:
            out[self._indices[rows]] += 1.0
        return out / len(known) if known else out

    def save(self, directory: Path) -> list[Path]:
        """Write the index in bm25s's file layout and return the paths."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, array in (
            (_DATA, self._data),
            (_INDICES, self._indices),
            (_INDPTR, self._indptr),
        ):
            np.save(directory / name, array, allow_pickle=False)
        (directory / _VOCAB).write_text(json.dumps(self._vocab), encoding="utf-8")
        (directory / _PARAMS).write_text(json.dumps(self._params, indent=4), encoding="utf-8")
        return sorted(p for p in directory.iterdir() if p.is_file())

    @classmethod
    def load(cls, directory: Path) -> Lexical:
        """The index saved in ``directory`` (by :meth:`save` or by bm25s itself)."""
        try:
            params = json.loads((directory / _PARAMS).read_text("utf-8"))
            vocab = json.loads((directory / _VOCAB).read_text("utf-8"))
            num_docs = int(params["num_docs"])
            arrays = [
                np.load(directory / n, allow_pickle=False) for n in (_DATA, _INDICES, _INDPTR)
            ]
        except (OSError, ValueError, KeyError) as exc:
            raise IndexError_(
                f"{directory}: unreadable BM25 index ({exc}); rebuild it with "
                "`cartograph index build`"
            ) from exc
        data, indices, indptr = arrays
        if len(indptr) < len(vocab) or len(data) != len(indices) or int(indptr[-1]) != len(data):
            raise IndexError_(
                f"{directory}: BM25 arrays do not fit its vocabulary; rebuild it with "
                "`cartograph index build`"
            )
        return cls(vocab, data, indices, indptr, num_docs, params)


_DATA = "data.csc.index.npy"
_INDICES = "indices.csc.index.npy"
_INDPTR = "indptr.csc.index.npy"
_VOCAB = "vocab.index.json"
_PARAMS = "params.index.json"
