"""The HTTP transport's listening socket: the connections it accepts send without Nagle's delay."""

from __future__ import annotations

import asyncio
import socket

from cartograph.proxy.server import bind_socket


def test_connections_accepted_by_uvicorns_loop_have_tcp_nodelay() -> None:
    """uvicorn serves on asyncio, which sets TCP_NODELAY only on sockets that name IPPROTO_TCP;
    without it a response written in two parts waited for the client's delayed ACK (~40 ms)."""
    listener = bind_socket("127.0.0.1", 0)

    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def accepted(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=listener)
        try:
            _, client = await asyncio.open_connection(*listener.getsockname()[:2])
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                client.close()
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(accept_one()) != 0
