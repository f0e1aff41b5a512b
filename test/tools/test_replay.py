# SPDX-License-Identifier: GPL-2.0-or-later
"""The replay's size distributions and CONNECT tunnels (through the loopback
proxy of conftest.py and the real origin)."""
import asyncio
import csv
import random


from reqsched_tools import replay

def test_size_dist_lognormal_uniform_and_cap():
    rng = random.Random(1)
    small = replay.SizeDist(mu=8.5, sigma=1.4, max=2_000_000)
    xs = [small.draw(rng) for _ in range(4000)]
    assert 1 <= min(xs) and max(xs) <= 2_000_000
    frac = sum(1 for x in xs if x <= 16384) / len(xs)
    assert 0.75 < frac < 0.86                       # Phi((ln 16384 - 8.5) / 1.4) = 0.805
    bulk = replay.SizeDist(uniform=(2e6, 8e6))
    ys = [bulk.draw(rng) for _ in range(500)]
    assert 2e6 <= min(ys) and max(ys) <= 8e6
    assert replay.SizeDist(uniform=(5e6, 5e6), max=1000).draw(rng) == 1000
    d = replay.SizeDist.from_json({"uniform": [1, 2]}, 9.0, 1.0)
    assert d.uniform == (1.0, 2.0)
    d = replay.SizeDist.from_json({"mu": 7, "max": 10}, 9.0, 1.5)
    assert (d.mu, d.sigma, d.max, d.uniform) == (7.0, 1.5, 10, None)


def test_per_user_sizes_in_the_url_sequence():
    src = replay.UrlSource(["10.20.0.1"], 9.0, 1.0, 1)
    seq = src.sequence(0, 1, "bulk-1", replay.SizeDist(uniform=(2e6, 2e6)))
    assert all(next(seq).endswith("size=2000000") for _ in range(5))


def test_tunnel_helpers():
    assert replay.tunnel_path("http://10.20.0.1/obj/u/1?size=5") == "/obj/u/1?size=5"
    assert replay.tunnel_path("http://h") == "/"
    assert replay.tunnel_status(b"HTTP/1.1 200 Connection established\r\n\r\n") == 200
    assert replay.tunnel_status(b"HTTP/1.1 403 Forbidden\r\nX: y\r\n\r\n") == 403
    assert replay.tunnel_status(b"garbage\r\n\r\n") == 0


def test_requests_inside_connect_tunnels(mini_proxy, tmp_path):
    async def main():
        users = [replay.User("t-1", "t", "127.0.0.1", pattern="backlogged", tunnel=True,
                             requests_per_tunnel=3, sizes=replay.SizeDist(uniform=(1000, 1000)))]
        src = replay.UrlSource(["10.20.0.1", "10.20.0.2"], 9.0, 1.0, 1)
        rp = replay.Replay(users, ("127.0.0.1", mini_proxy.port), src, duration=1.5, max_requests=7,
                           timeout=5, bin_s=1, seed=1, progress_s=10)
        await rp.run()
        return rp

    rp = asyncio.run(main())
    rp.write(str(tmp_path), {})
    rows = list(csv.DictReader(open(tmp_path / "requests.csv")))
    assert len(rows) == 7
    assert all(r["status"] == "200" and r["bytes"] == "1000" and r["error"] == "" for r in rows)
    assert all(r["url"].startswith("https://10.20.0.") for r in rows)
    # 3 requests per tunnel: 7 requests open 3 tunnels, each to one server
    connects = mini_proxy.connects
    assert len(connects) == 3 and all(c.endswith(":443") for c in connects)
    hosts = [r["url"].split("/")[2] for r in rows]
    assert hosts[0] == hosts[1] == hosts[2] and hosts[3] == hosts[4] == hosts[5]
