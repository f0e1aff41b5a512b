# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-origin on a free loopback port, for the tests that need a server."""
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
import time

import pytest


@pytest.fixture(scope="module")
def start_origin():
    """start(*args) -> (process, port): reqsched-origin listening, with its
    stderr piped; every process started is stopped, and the directory of
    their port files removed, after the module."""
    procs = []
    ports = tempfile.TemporaryDirectory(prefix="rs-origin-test-")

    def start(*args: str):
        pf = os.path.join(ports.name, f"port-{len(procs)}")
        p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.origin", "--port", "0",
                              "--port-file", pf, "--max-runtime", "60", "--quiet", *args],
                             stderr=subprocess.PIPE, text=True)
        procs.append(p)
        for _ in range(200):
            if os.path.exists(pf) and os.path.getsize(pf):
                break
            time.sleep(0.02)
        return p, int(open(pf).read().split()[0].rsplit(":", 1)[1])

    yield start
    for p in procs:
        if p.poll() is None:
            p.terminate()
            p.communicate(timeout=5)
    ports.cleanup()


class MiniProxy:
    """A forward proxy on a free loopback port, in a thread of its own: each
    client connection is piped to the origin (absolute-form requests, which
    reqsched-origin answers); CONNECT is answered 200 and then piped. It keeps
    the source address of every accepted connection, the head of its first
    request and each CONNECT target."""

    def __init__(self, origin_port: int):
        self.origin_port = origin_port
        self.accepted: list[str] = []
        self.heads: list[bytes] = []
        self.connects: list[str] = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(5)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    @staticmethod
    async def _pipe(r, w) -> None:
        try:
            while data := await r.read(65536):
                w.write(data)
                await w.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            w.close()

    async def _client(self, reader, writer) -> None:
        self.accepted.append(writer.get_extra_info("peername")[0])
        ur, uw = await asyncio.open_connection("127.0.0.1", self.origin_port)
        first = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(first)
        if first.startswith(b"CONNECT "):
            self.connects.append(first.split(b" ", 2)[1].decode())
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            uw.write(first)
        await asyncio.gather(self._pipe(reader, uw), self._pipe(ur, writer))

    def close(self) -> None:
        """Cancel every connection's pipes and stop the loop: no coroutine is
        left to be finalized later (during an unrelated import, say)."""
        async def shutdown() -> None:
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def mini_proxy(start_origin):
    """A MiniProxy in front of a fresh reqsched-origin."""
    px = MiniProxy(start_origin()[1])
    yield px
    px.close()
