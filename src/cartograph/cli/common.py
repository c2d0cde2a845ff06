"""Shared plumbing for CLI commands: the app context, the option blocks several commands declare,
JSON output, rich output made on first use, and errors to exit codes.

Exit codes: 0 ok, 1 findings (verification failures, Rift HIGH), 2 usage or config error.
Human output goes to stdout; logs and progress bars go to stderr. Nothing here imports rich or
a library package at import time: ``cartograph --help`` loads click and this module only.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from cartograph.errors import CartographError
from cartograph.workspace import Workspace

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.status import Status
    from rich.table import Table

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class LazyConsole:
    """A rich ``Console`` made on first use (importing rich costs more than printing help)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.console.print(*objects, **kwargs)

    def status(self, status: str) -> Status:
        return self.console.status(status)

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal


stdout = LazyConsole(soft_wrap=True)
stderr = LazyConsole(stderr=True)


def new_table(*headers: str, **options: Any) -> Table:
    """A rich ``Table`` (rich is imported here, when a command prints one)."""
    from rich.table import Table

    return Table(*headers, **options)


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


# -- option blocks ------------------------------------------------------------------------------


def home_option(func: F) -> F:
    return click.option(
        "--home",
        envvar="CARTOGRAPH_HOME",
        type=click.Path(file_okay=False),
        help="Workspace directory (keys, cards, index, snapshots, logs). "
        "Default: $CARTOGRAPH_HOME or ./.cartograph",
    )(func)


def store_option(func: F) -> F:
    return click.option(
        "--store",
        envvar="CARTOGRAPH_STORE",
        metavar="URL",
        help="Shared store for cards, index, audit log and quarantine: "
        "postgresql://USER@HOST/DB (several proxy replicas on one store; docs/scale-out.md). "
        "Default: $CARTOGRAPH_STORE, else the workspace files.",
    )(func)


def json_option(help: str = "Print the result as JSON.") -> Callable[[F], F]:
    """``--json`` (parameter ``as_json``)."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def k_option(help: str, *, flag: str = "-k", most: int = 100) -> Callable[[F], F]:
    """How many tools (parameter ``k``, 1..most, default 5)."""
    return click.option(
        flag, "k", type=click.IntRange(1, most), default=5, show_default=True, help=help
    )


def method_option(
    methods: Sequence[str],
    help: str,
    *,
    default: str | None = None,
    multiple: bool = False,
    dest: str = "method",
) -> Callable[[F], F]:
    """``--method`` chosen from ``methods`` (with a shown default, or repeatable)."""
    return click.option(
        "--method",
        dest,
        type=click.Choice(methods),
        multiple=multiple,
        default=default,
        show_default=default is not None,
        help=help,
    )


def config_option(help: str) -> Callable[[F], F]:
    """``--config`` mcp.json (parameter ``config_path``)."""
    return click.option("--config", "config_path", type=click.Path(dir_okay=False), help=help)


def policy_option(help: str = "Policy JSON.") -> Callable[[F], F]:
    """``--policy`` FILE (parameter ``policy_file``)."""
    return click.option("--policy", "policy_file", type=click.Path(dir_okay=False), help=help)


# -- output and errors --------------------------------------------------------------------------


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
            from rich.markup import escape

            stderr.print("[bold red]error:[/]", escape(str(exc)), highlight=False, soft_wrap=True)
            raise SystemExit(exc.exit_code) from None

    return wrapper


def progress(transient: bool = True) -> Progress:
    """A rich progress bar on stderr (disabled when stderr is not a terminal)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr.console,
        transient=transient,
        disable=not stderr.is_terminal,
    )


BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def limit_blas_threads() -> None:
    """One BLAS thread for this process unless ``$OPENBLAS_NUM_THREADS`` says otherwise; read
    when NumPy is first imported, so it is set before any command imports it.

    Ranking's NumPy products are small (a query against 2.6k-9.6k card vectors: about a
    millisecond on one thread), and after each one OpenBLAS's second thread spins on the other
    core for milliseconds: on 2 cores the reranker's second worker lost that core to it
    (discover with the reranker p50 108 -> 97 ms with two workers; with one BLAS thread 106 ->
    60 ms, docs/benchmarks.md "Reranker"). The embedders keep to one thread for the same reason.
    """
    os.environ.setdefault(BLAS_THREADS_ENV, "1")


def configure_logging(verbose: int) -> None:
    """One handler on stderr, on the root logger, for our logs and the libraries' alike.

    On the root, because a library's module-level ``logging.debug(...)`` (the MCP SDK calls
    one when an HTTP client disconnects) runs ``logging.basicConfig()`` when the root has no
    handler, and every record would then be printed twice. Ours log at the level ``-v`` asks
    for; the libraries' at WARNING and above, without the tracebacks of normal client
    disconnects (:class:`LibraryLogFilter`)."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(LibraryLogFilter())
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


class LibraryLogFilter(logging.Filter):
    """Keeps libraries at WARNING and above (a library that sets its own logger to DEBUG, as
    bm25s does on import, would otherwise print through our handler), and drops a library's
    error record whose exception is only a closed stream: what the MCP SDK logs (with a
    traceback, at ERROR) every time an HTTP client goes away normally."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("cartograph"):
            return True
        if record.levelno < logging.WARNING:
            return False
        if not record.exc_info:
            return True
        exc = record.exc_info[1]
        return exc is None or not _only_disconnects(exc)


def _only_disconnects(exc: BaseException) -> bool:
    import anyio  # only when a library logs an exception: --help stays free of it

    if isinstance(exc, BaseExceptionGroup):
        return all(_only_disconnects(e) for e in exc.exceptions)
    return isinstance(
        exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream
    )
