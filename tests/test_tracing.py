"""OpenTelemetry traces: a real `serve --transport http --otlp-endpoint` exporting to an OTLP/HTTP
receiver in this process, with an agent's W3C trace context carried through the proxy into the
upstream's ``_meta.traceparent`` (stdio and HTTP upstreams) and the HTTP upstream's
``traceparent`` header."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest
from accesskit import cli, start_serve, stop
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from proxykit import Env, attest, start_http_upstream, stop_process, text

from cartograph.errors import ConfigError
from cartograph.tracing import start_tracing, traces_endpoint

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


def test_the_endpoint_comes_from_the_option_or_the_standard_variables() -> None:
    assert traces_endpoint(None, {}) is None
    assert traces_endpoint("http://c:4318", {}) == "http://c:4318/v1/traces"
    assert traces_endpoint("http://c:4318/", {}) == "http://c:4318/v1/traces"
    assert traces_endpoint("https://c/otlp/v1/traces", {}) == "https://c/otlp/v1/traces"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318"}
    assert traces_endpoint(None, env) == "http://base:4318/v1/traces"
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://traces:9/x"
    assert traces_endpoint(None, env) == "http://traces:9/x"
    assert traces_endpoint("http://option:1", env) == "http://option:1/v1/traces"
    with pytest.raises(ConfigError, match="not an http"):
        traces_endpoint("collector:4318", {})


def test_without_the_sdk_the_error_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(ConfigError, match=r"pip install 'cartograph\[otel\]'"):
        start_tracing("http://127.0.0.1:9/v1/traces")


def test_serve_refuses_a_bad_endpoint_before_it_listens(env: Env) -> None:
    done = cli(env.ws.root, "serve", "--config", str(env.config()), "--otlp-endpoint", "nope:1")
    assert done.returncode == 2
    assert "OTLP endpoint 'nope:1' is not an http(s) URL" in done.stderr


class Receiver(ThreadingHTTPServer):
    spans: list[dict[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            service = next(
                a.value.string_value
                for a in resource.resource.attributes
                if a.key == "service.name"
            )
            for scope in resource.scope_spans:
                for s in scope.spans:
                    attrs = {a.key: a.value.string_value or a.value.int_value for a in s.attributes}
                    self.server.spans.append(
                        {
                            "service": service,
                            "name": s.name,
                            "trace": s.trace_id.hex(),
                            "span": s.span_id.hex(),
                            "parent": s.parent_span_id.hex(),
                            "attributes": attrs,
                        }
                    )
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver(("127.0.0.1", 0), _Handler)
    server.spans = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def _agent(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with (
        httpx.AsyncClient(timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        with anyio.fail_after(60):
            await client.initialize()
            meta = {"traceparent": TRACEPARENT}
            await client.call_tool("discover", {"task": "add two numbers", "k": 3}, meta=meta)
            for server in ("chaos", "web"):
                args = {"server": server, "tool": "chain", "arguments": {}}
                result = await client.call_tool("call", args, meta=meta)
                assert not result.is_error, text(result)
                out[server] = json.loads(text(result))
    return out


@pytest.mark.anyio
async def test_an_agents_trace_runs_through_the_proxy_into_both_upstreams(
    env: Env, receiver: Receiver
) -> None:
    upstream, port = start_http_upstream("http")
    try:
        config = env.config(web={"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
        await attest(env.ws.root, config, ["web"])
        endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
        args = ["--config", str(config), "--insecure-open", "--otlp-endpoint", endpoint]
        proc, url = start_serve(env.ws.root, args)
        try:
            seen = await _agent(url)
        finally:
            stop(proc)  # SIGTERM: the batch is flushed on the way out
    finally:
        stop_process(upstream)

    spans = receiver.spans
    assert spans and all(s["service"] == "cartograph" for s in spans)
    ours = {s["span"] for s in spans}
    for server in ("chaos", "web"):  # the upstream's parent is a span of the proxy's trace
        version, trace, parent, _ = seen[server]["traceparent"].split("-")
        assert (version, trace) == ("00", TRACE) and parent in ours
    header = seen["web"]["http_traceparent"].split("-")
    assert header[1] == TRACE and header[2] in ours

    by_name: dict[str, list[dict[str, Any]]] = {}
    for s in spans:
        by_name.setdefault(s["name"], []).append(s)
    calls = by_name["cartograph call"]
    assert {c["attributes"]["cartograph.server"] for c in calls} == {"chaos", "web"}
    assert all(c["attributes"]["cartograph.outcome"] == "ok" for c in calls)
    (discover,) = by_name["cartograph discover"]
    assert discover["attributes"]["cartograph.results"] >= 1
    assert str(discover["attributes"]["cartograph.discover_id"])
    assert all(s["trace"] == TRACE for s in [*calls, discover])
    roots = [s for s in spans if s["parent"] == PARENT]  # the SDK's server spans
    assert roots and all(s["trace"] == TRACE for s in roots)
