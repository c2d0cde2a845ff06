"""The CLI's one stderr handler: our records at the level -v asks for, libraries' at WARNING+."""

from __future__ import annotations

import logging

import pytest

from cartograph.cli.common import configure_logging


@pytest.fixture
def handler_output(capsys: pytest.CaptureFixture[str]):
    def run(verbose: int) -> str:
        configure_logging(verbose)
        import bm25s  # noqa: F401  (sets its own logger to DEBUG on import)

        chatty = logging.getLogger("bm25s")
        chatty.setLevel(logging.DEBUG)
        chatty.debug("Building index from tokens")
        chatty.warning("a library warning")
        logging.getLogger("cartograph.index").info("our info line")
        logging.getLogger("cartograph.index").warning("our warning line")
        return capsys.readouterr().err

    return run


def test_a_library_that_sets_debug_on_itself_does_not_print_debug(handler_output) -> None:
    err = handler_output(0)
    assert "Building index from tokens" not in err
    assert "a library warning" in err and "our warning line" in err
    assert "our info line" not in err


def test_verbose_shows_our_info_and_still_not_the_librarys_debug(handler_output) -> None:
    err = handler_output(1)
    assert "our info line" in err
    assert "Building index from tokens" not in err
