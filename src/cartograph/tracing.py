"""OpenTelemetry traces to an OTLP endpoint, when one is configured.

:func:`start_tracing` installs the OpenTelemetry SDK's tracer provider with a batching OTLP/HTTP
exporter (the ``otel`` extra) when ``serve --otlp-endpoint URL`` or the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` names one; the
exporter reads the other standard variables itself (``OTEL_EXPORTER_OTLP_HEADERS``, timeouts),
and ``OTEL_SERVICE_NAME`` names the service (default ``cartograph``). With a provider in place:

- the MCP SDK's own spans run: a server span per request from an agent, parented on the W3C
  ``traceparent`` the agent sent in ``_meta``, and a client span per request to an upstream,
  whose context the SDK writes into that request's ``_meta.traceparent``;
- :func:`span` adds Cartograph's spans in between (``cartograph discover``, ``cartograph call
  server/tool``) with what was asked and what came of it (never the task text or arguments);
- :func:`inject_headers` puts ``traceparent`` on every HTTP request to an HTTP upstream too.

Without an endpoint nothing is installed and :func:`span` costs one check.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from cartograph.errors import ConfigError

logger = logging.getLogger(__name__)

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
_state: dict[str, Any] = {"tracer": None}


def traces_endpoint(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Where spans go: ``option``, else the traces variable, else the base variable; a base URL
    (no path) gets ``/v1/traces``, as the OTLP/HTTP specification says."""
    env = os.environ if environ is None else environ
    if option is None and env.get(TRACES_ENDPOINT_ENV):
        return env[TRACES_ENDPOINT_ENV]
    base = option or env.get(ENDPOINT_ENV) or None
    if base is None:
        return None
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"OTLP endpoint {base!r} is not an http(s) URL; give one like http://127.0.0.1:4318"
        )
    return base if parts.path.strip("/") else base.rstrip("/") + "/v1/traces"


def start_tracing(endpoint: str) -> Callable[[], None]:
    """Install the SDK tracer provider exporting to ``endpoint``; returns the shutdown that
    flushes what is still batched (call it when serving ends)."""
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(
            f"OTLP traces need the OpenTelemetry SDK ({exc.name} is missing): "
            "pip install 'cartograph[otel]'"
        ) from None
    name = os.environ.get("OTEL_SERVICE_NAME") or "cartograph"
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    _state["tracer"] = trace.get_tracer("cartograph")
    logger.info("tracing: spans go to %s as service %s", endpoint, name)

    def shutdown() -> None:
        _state["tracer"] = None
        provider.shutdown()  # flushes the batch

    return shutdown


def tracing_on() -> bool:
    return _state["tracer"] is not None


@contextmanager
def span(name: str, **attributes: str | int | float | bool) -> Iterator[Any]:
    """A Cartograph span around the block (yields it, or ``None`` without tracing); an
    exception ends it with an error status."""
    tracer = _state["tracer"]
    if tracer is None:
        yield None
        return
    with tracer.start_as_current_span(name, attributes=attributes) as current:
        yield current


def inject_headers(request: Any) -> None:
    """An httpx request hook: the current span's ``traceparent`` on the request's headers."""
    if _state["tracer"] is None:
        return
    from opentelemetry.propagate import inject

    inject(request.headers)


async def inject_headers_async(request: Any) -> None:
    inject_headers(request)
