#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark reqsched-origin on loopback: unpaced throughput of one connection,
and N paced connections (does the origin keep their rates, at what CPU cost)."""
import asyncio
import os
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


async def fetch(port, path, size):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    await w.drain()
    await r.readuntil(b"\r\n\r\n")
    n = 0
    while n < size:
        d = await r.read(262144)
        if not d:
            break
        n += len(d)
    w.close()
    return n


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        x = f.read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")


async def bench(port, pid):
    size = 100_000_000
    c0, t = cpu(pid), time.time()
    n = await fetch(port, f"/big?size={size}", size)
    dt = time.time() - t
    print(f"origin unpaced, 1 connection: {n * 8 / dt / 1e6:.0f} Mbit/s "
          f"({cpu(pid) - c0:.2f} CPU s for {n / 1e6:.0f} MB)")
    for conns, rate in ((100, 500_000), (300, 200_000)):
        size = int(rate / 8 * 8)               # 8 s at the paced rate
        c0, t = cpu(pid), time.time()
        got = await asyncio.gather(*[fetch(port, f"/p{i}?size={size}&rate_bps={rate}", size)
                                     for i in range(conns)])
        dt = time.time() - t
        print(f"origin paced, {conns} x {rate / 1e3:.0f} kbit/s: aggregate "
              f"{sum(got) * 8 / dt / 1e6:.1f} Mbit/s (ideal {conns * rate / 1e6:.1f}), "
              f"{dt:.2f} s for 8 s of data, origin CPU {(cpu(pid) - c0) / dt * 100:.0f}% "
              f"of one core")


def main():
    with tempfile.TemporaryDirectory() as d:
        pf = os.path.join(d, "port")
        p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.origin",
                              "--port", "0", "--port-file", pf, "--max-runtime", "120",
                              "--quiet"])
        try:
            for _ in range(100):
                if os.path.exists(pf) and os.path.getsize(pf):
                    break
                time.sleep(0.05)
            port = int(open(pf).read().split()[0].rsplit(":", 1)[1])
            asyncio.run(bench(port, p.pid))
        finally:
            p.terminate()
            p.wait(5)


if __name__ == "__main__":
    main()
