# SPDX-License-Identifier: GPL-2.0-or-later
"""The testbed network: four namespaces per run, names prefixed by the run id.

  RUN-cli  lan0 10.10.0.2/16, one address per user 10.10.C.U (C = class 1.., U = user),
           cross-traffic sink 10.10.250.1; default via 10.10.0.1
  RUN-gw   lan1 10.10.0.1/16 (Squid listens on :3128), wan0 10.99.0.1/30;
           uplink tbf on wan0; HTB (mode htb) on lan1; forwards cross traffic
  RUN-isp  wan1 10.99.0.2/30 with the downlink bottleneck tbf (drop-tail, limit
           buffer_ms at C), srv0 10.98.0.1/30
  RUN-srv  srv1 10.98.0.2/30, origin addresses 10.20.0.1..N and the cross-traffic
           sender 10.20.255.1 on lo

The pairs are created directly inside their namespaces, so nothing is ever
attached to the host's own network and parallel runs never collide.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Optional

GW_LAN = "10.10.0.1"
PROXY_PORT = 3128
CROSS_SINK = "10.10.250.1"
CROSS_SOURCE = "10.20.255.1"
NS_ROLES = ("cli", "gw", "isp", "srv")
MTU_FRAME = 1514


class NetError(RuntimeError):
    pass


def run(cmd: list[str], check: bool = True, input: Optional[str] = None,
        capture: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, input=input, text=True,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None)
    if check and p.returncode != 0:
        raise NetError(f"{' '.join(cmd)} failed ({p.returncode}): {(p.stderr or '').strip()}")
    return p


def existing_namespaces() -> list[str]:
    p = run(["ip", "-j", "netns", "list"], check=False)
    try:
        return [n["name"] for n in json.loads(p.stdout or "[]")]
    except ValueError:
        return []


def user_addr(class_index: int, user_index: int) -> str:
    """Class index from 0, user index from 0 -> 10.10.(c+1).(u+1)."""
    if not 0 <= class_index < 240 or not 0 <= user_index < 250:
        raise ValueError("at most 240 classes of 250 users")
    return f"10.10.{class_index + 1}.{user_index + 1}"


def buffer_limit_bytes(rate_bps: float, buffer_ms: float) -> int:
    """The tbf's drop-tail limit: buffer_ms of queue at rate_bps, at least 4 frames."""
    return int(max(rate_bps / 8.0 * buffer_ms / 1000.0, 4 * MTU_FRAME))


def server_addr(i: int) -> str:
    return f"10.20.{i // 250}.{i % 250 + 1}"


class Topology:
    def __init__(self, run_id: str):
        if not run_id or len(run_id) > 20 or not run_id.replace("-", "").isalnum():
            raise ValueError(f"bad run id {run_id!r} (1..20 letters, digits, -)")
        self.id = run_id
        self.ns = {r: f"{run_id}-{r}" for r in NS_ROLES}

    # -- helpers ---------------------------------------------------------
    def ip(self, role: str, args: str) -> None:
        run(["ip", "-n", self.ns[role]] + args.split())

    def batch(self, role: str, lines: list[str]) -> None:
        run(["ip", "-n", self.ns[role], "-batch", "-"], input="\n".join(lines) + "\n")

    def exec_argv(self, role: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns[role]] + argv

    def sysctl(self, role: str, key: str, value: str) -> None:
        run(self.exec_argv(role, ["sysctl", "-q", "-w", f"{key}={value}"]))

    # -- setup / teardown -----------------------------------------------------
    def setup(self, n_classes_users: list[int], n_servers: int, downlink_bps: float,
              uplink_bps: float, buffer_ms: float, initrwnd: int = 0) -> None:
        """Create (or re-create: idempotent) the four namespaces and the links.
        initrwnd > 0: the gateway's route to the servers offers that many
        segments in a new connection's SYN (the proxy host's deployment)."""
        self.teardown(quiet=True)
        for r in NS_ROLES:
            run(["ip", "netns", "add", self.ns[r]])
            self.ip(r, "link set lo up")
        pairs = [("cli", "lan0", "gw", "lan1"), ("gw", "wan0", "isp", "wan1"),
                 ("isp", "srv0", "srv", "srv1")]
        for a, an, b, bn in pairs:
            run(["ip", "link", "add", an, "netns", self.ns[a], "type", "veth",
                 "peer", "name", bn, "netns", self.ns[b]])
            for role, dev in ((a, an), (b, bn)):
                # no TSO/GSO/GRO: the tbf must see and drop real 1514-byte packets
                run(self.exec_argv(role, ["ethtool", "-K", dev, "tso", "off", "gso", "off",
                                          "gro", "off"]), check=False)
                self.ip(role, f"link set {dev} up")
        cli = ["addr add 10.10.0.2/16 dev lan0", f"addr add {CROSS_SINK}/16 dev lan0"]
        for c, n in enumerate(n_classes_users):
            cli += [f"addr add {user_addr(c, u)}/16 dev lan0" for u in range(n)]
        cli.append(f"route add default via {GW_LAN}")
        self.batch("cli", cli)
        self.batch("gw", [f"addr add {GW_LAN}/16 dev lan1", "addr add 10.99.0.1/30 dev wan0",
                          "route add 10.20.0.0/16 via 10.99.0.2"
                          + (f" initrwnd {initrwnd}" if initrwnd else "")])
        self.batch("isp", ["addr add 10.99.0.2/30 dev wan1", "addr add 10.98.0.1/30 dev srv0",
                           "route add 10.10.0.0/16 via 10.99.0.1",
                           "route add 10.20.0.0/16 via 10.98.0.2"])
        srv = [f"addr add {server_addr(i)}/32 dev lo" for i in range(n_servers)]
        srv += [f"addr add {CROSS_SOURCE}/32 dev lo", "addr add 10.98.0.2/30 dev srv1",
                "route add default via 10.98.0.1"]
        self.batch("srv", srv)
        for r in ("gw", "isp"):
            self.sysctl(r, "net.ipv4.ip_forward", "1")
        self.shape(downlink_bps, uplink_bps, buffer_ms)

    def queue_forwarded(self, role: str, queue: int) -> None:
        """Every packet the namespace forwards goes to NFQUEUE queue (passed
        on unqueued while no program listens: --queue-bypass)."""
        run(self.exec_argv(role, ["iptables", "-A", "FORWARD", "-j", "NFQUEUE",
                                  "--queue-num", str(queue), "--queue-bypass"]))

    def shape(self, downlink_bps: float, uplink_bps: float, buffer_ms: float) -> dict:
        """tbf on the ISP's interface toward the gateway (downlink) and on the
        gateway's WAN interface (uplink); drop-tail limit = buffer_ms at the
        link's rate (at least 4 frames)."""
        out = {}
        for role, dev, rate in (("isp", "wan1", downlink_bps), ("gw", "wan0", uplink_bps)):
            limit = buffer_limit_bytes(rate, buffer_ms)
            burst = int(max(2 * MTU_FRAME, rate / 8.0 * 0.004))
            run(["tc", "-n", self.ns[role], "qdisc", "replace", "dev", dev, "root", "tbf",
                 "rate", f"{int(rate)}bit", "burst", str(burst), "limit", str(limit)])
            out[dev] = {"rate_bps": rate, "burst_bytes": burst, "limit_bytes": limit,
                        "buffer_ms": buffer_ms}
        return out

    def htb_on(self, rate_bps: float, class_weights: list[float]) -> None:
        """HTB on the gateway's LAN side: one class per traffic class (10.10.C.0/24)
        with rate proportional to its weight, all borrowing up to rate_bps."""
        tc = ["tc", "-n", self.ns["gw"]]
        run(tc + ["qdisc", "replace", "dev", "lan1", "root", "handle", "1:", "htb",
                  "default", "999"])
        run(tc + ["class", "replace", "dev", "lan1", "parent", "1:", "classid", "1:1", "htb",
                  "rate", f"{int(rate_bps)}bit", "ceil", f"{int(rate_bps)}bit"])
        wsum = sum(class_weights)
        for c, w in enumerate(class_weights):
            cid = f"1:{c + 10:x}"
            r = max(8000, int(rate_bps * w / wsum))
            run(tc + ["class", "replace", "dev", "lan1", "parent", "1:1", "classid", cid, "htb",
                      "rate", f"{r}bit", "ceil", f"{int(rate_bps)}bit", "quantum", "1514"])
            run(tc + ["filter", "add", "dev", "lan1", "parent", "1:", "protocol", "ip", "prio",
                      "1", "u32", "match", "ip", "dst", f"10.10.{c + 1}.0/24", "flowid", cid])

    def htb_off(self) -> None:
        run(["tc", "-n", self.ns["gw"], "qdisc", "del", "dev", "lan1", "root"], check=False)

    def kill_all(self, quiet: bool = False) -> None:
        """Stop every process still running inside this run's namespaces."""
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0.5)):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self.pids():
                time.sleep(0.1)

    def pids(self) -> list[int]:
        out = []
        have = set(existing_namespaces())
        for r in NS_ROLES:
            if self.ns[r] in have:
                p = run(["ip", "netns", "pids", self.ns[r]], check=False)
                out += [int(x) for x in p.stdout.split() if x.isdigit()]
        return out

    def teardown(self, quiet: bool = False) -> None:
        self.kill_all(quiet)
        have = set(existing_namespaces())
        for r in NS_ROLES:
            if self.ns[r] in have:
                run(["ip", "netns", "del", self.ns[r]], check=False)

    def tc_stats(self, role: str = "isp", dev: str = "wan1") -> Optional[dict]:
        p = run(["tc", "-n", self.ns[role], "-s", "-j", "qdisc", "show", "dev", dev],
                check=False)
        try:
            for q in json.loads(p.stdout or "[]"):
                if q.get("root"):
                    return q
        except ValueError:
            pass
        return None
