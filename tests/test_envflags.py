"""Environment switches: one spelling of on and off for every CARTOGRAPH_* switch."""

from __future__ import annotations

import logging

import pytest

from cartograph.envflags import env_flag

NAME = "CARTOGRAPH_TEST_SWITCH"


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_on(monkeypatch, value):
    monkeypatch.setenv(NAME, value)
    assert env_flag(NAME) is True


@pytest.mark.parametrize("value", ["0", "False", "no", "OFF "])
def test_off(monkeypatch, value):
    monkeypatch.setenv(NAME, value)
    assert env_flag(NAME) is False


def test_unset_empty_and_unknown_are_not_set(monkeypatch, caplog):
    monkeypatch.delenv(NAME, raising=False)
    assert env_flag(NAME) is None
    monkeypatch.setenv(NAME, "  ")
    assert env_flag(NAME) is None
    monkeypatch.setenv(NAME, "maybe")
    with caplog.at_level(logging.WARNING):
        assert env_flag(NAME) is None  # no logger given: silent
        assert not caplog.records
        assert env_flag(NAME, logging.getLogger("envflags-test")) is None
    assert NAME in caplog.text and "'maybe'" in caplog.text
