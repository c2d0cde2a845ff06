"""The floor of one extra process hop: a line relay between an MCP client and one upstream.

    python benchmarks/relay_floor.py UPSTREAM_COMMAND [ARG ...]

Starts the upstream and copies newline-delimited messages both ways without parsing them:
no JSON, no validation, no policy, no audit. No proxy can be cheaper than this over stdio in
Python, so `benchmarks/gateway.py` times it beside the pooled proxy (scenario ``relay-floor``)
to say how much of a proxied call's extra time is the hop itself and how much is the proxy.
"""

from __future__ import annotations

import asyncio
import sys

LIMIT = 1 << 24  # longest line relayed (16 MiB)


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter | None, put) -> None:
    while line := await source.readline():
        put(line)
    if sink is not None:
        sink.close()


async def main(command: list[str]) -> int:
    upstream = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert upstream.stdin is not None and upstream.stdout is not None
    loop = asyncio.get_running_loop()
    client = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(client), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    out = asyncio.StreamWriter(transport, protocol, None, loop)
    await asyncio.gather(
        _pump(client, upstream.stdin, upstream.stdin.write),
        _pump(upstream.stdout, None, out.write),
    )
    return await upstream.wait()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(asyncio.run(main(sys.argv[1:])))
