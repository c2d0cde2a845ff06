"""The front drops SDK 2's per-request OpenTelemetry span unless tracing is wanted."""

from __future__ import annotations

import pytest

from cartograph.proxy.front import TRACING_ENV, FrontServer, tracing_wanted


def _span_names(server: FrontServer) -> list[str]:
    return [type(m).__name__ for m in server.middleware]


def test_without_a_tracer_provider_the_span_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRACING_ENV, raising=False)
    assert not tracing_wanted()
    assert "OpenTelemetryMiddleware" not in _span_names(FrontServer("cartograph"))


@pytest.mark.parametrize("flag", ["1", "true", "on"])
def test_cartograph_otel_keeps_the_span(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    monkeypatch.setenv(TRACING_ENV, flag)
    assert tracing_wanted()
    assert "OpenTelemetryMiddleware" in _span_names(FrontServer("cartograph"))


def test_cartograph_otel_off_drops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRACING_ENV, "0")
    assert not tracing_wanted()
