"""The bounded stdio reader: linear line splitting and over-long messages turned into errors."""

from __future__ import annotations

import json

from mcp import types
from mcp.shared.message import SessionMessage

from cartograph.transport.stdio_bounded import OversizedMessage, _LineSplitter


def _feed_in_pieces(splitter: _LineSplitter, data: bytes, size: int) -> list[object]:
    out: list[object] = []
    for i in range(0, len(data), size):
        out += splitter.feed(data[i : i + size])
    return out


def test_messages_split_across_chunks_are_reassembled() -> None:
    lines = [{"jsonrpc": "2.0", "id": i, "result": {"text": "x" * (i * 37)}} for i in range(1, 30)]
    data = b"".join(json.dumps(m).encode() + b"\n" for m in lines)
    out = _feed_in_pieces(_LineSplitter(10_000), data, 7)
    assert [o.message.id for o in out if isinstance(o, SessionMessage)] == list(range(1, 30))


def test_an_oversized_reply_becomes_an_error_for_its_request_id_head_or_tail() -> None:
    big = "y" * 5000
    python_style = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"t": big}}).encode()
    node_style = json.dumps({"result": {"t": big}, "jsonrpc": "2.0", "id": "r-9"}).encode()
    after = json.dumps({"jsonrpc": "2.0", "id": 8, "result": {}}).encode()
    splitter = _LineSplitter(1000)
    out = _feed_in_pieces(splitter, python_style + b"\n" + node_style + b"\n" + after + b"\n", 300)
    assert len(out) == 3
    first, second, third = out
    assert isinstance(first, SessionMessage) and isinstance(second, SessionMessage)
    assert isinstance(first.message, types.JSONRPCError) and first.message.id == 7
    assert "over the 0.0 MB message limit" in first.message.error.message
    assert isinstance(second.message, types.JSONRPCError)
    assert second.message.id == "r-9"
    assert isinstance(third, SessionMessage) and third.message.id == 8


def test_garbage_lines_are_reported_and_reading_goes_on() -> None:
    splitter = _LineSplitter(1000)
    out = splitter.feed(b"Welcome!\n\n" + b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert isinstance(out[0], Exception) and not isinstance(out[0], OversizedMessage)
    assert isinstance(out[1], SessionMessage)
    assert len(out) == 2
