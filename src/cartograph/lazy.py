"""Lazy package exports: a package's public names resolve on first access.

A package ``__init__`` lists ``name -> (module, attribute)`` and binds the two functions
:func:`exports` returns as its module ``__getattr__`` and ``__dir__`` (PEP 562), so importing a
submodule (the CLI's option lists) does not load the whole package. A resolved name is cached
in the package's globals, so each is looked up once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, namespace: dict[str, Any], table: Mapping[str, tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose globals are ``namespace``."""

    def getattr_(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = table[name]
        value = getattr(importlib.import_module(module), attr)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
