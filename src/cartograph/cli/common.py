"""Shared plumbing for CLI commands: the workspace option, JSON output, errors to exit codes.

Exit codes: 0 ok, 1 findings (verification failures, Rift HIGH), 2 usage or config error.
Human output goes to stdout; logs and progress bars go to stderr.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cartograph.errors import CartographError
from cartograph.workspace import Workspace

P = ParamSpec("P")
R = TypeVar("R")

stdout = Console(soft_wrap=True)
stderr = Console(stderr=True)


@dataclass
class AppContext:
    """What every command receives through ``click.Context.obj``."""

    home: str | None
    verbose: int = 0
    store: str | None = None

    @property
    def workspace(self) -> Workspace:
        return Workspace.resolve(self.home, self.store)


pass_app = click.make_pass_decorator(AppContext, ensure=True)


def emit_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def handle_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn CartographError into a one-line message on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except CartographError as exc:
            stderr.print("[bold red]error:[/]", escape(str(exc)), highlight=False, soft_wrap=True)
            raise SystemExit(exc.exit_code) from None

    return wrapper


def progress(transient: bool = True) -> Progress:
    """A rich progress bar on stderr (disabled when stderr is not a terminal)."""
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=transient,
        disable=not stderr.is_terminal,
    )


def configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("cartograph")
    root.handlers[:] = [handler]
    root.setLevel(level)
