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

import anyio
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
    """One handler on stderr, on the root logger, for our logs and the libraries' alike.

    On the root, because a library's module-level ``logging.debug(...)`` (the MCP SDK calls
    one when an HTTP client disconnects) runs ``logging.basicConfig()`` when the root has no
    handler, and every record would then be printed twice. Ours log at the level ``-v`` asks
    for; the libraries' at WARNING and above, without the tracebacks of normal client
    disconnects (:class:`DisconnectFilter`)."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(DisconnectFilter())
    setattr(handler, _OURS, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)  # a second run in one process (tests) replaces ours only
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    ours = logging.getLogger("cartograph")
    ours.handlers[:] = []
    ours.setLevel(level)
    ours.propagate = True


_OURS = "_cartograph_handler"
_DISCONNECTS = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


class DisconnectFilter(logging.Filter):
    """Drops a library's error record whose exception is only a closed stream: what the MCP
    SDK logs (with a traceback, at ERROR) every time an HTTP client goes away normally."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("cartograph") or not record.exc_info:
            return True
        exc = record.exc_info[1]
        return exc is None or not _only_disconnects(exc)


def _only_disconnects(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_disconnects(e) for e in exc.exceptions)
    return isinstance(exc, _DISCONNECTS)
