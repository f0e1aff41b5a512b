# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load sessions --procs N (multiproc.py): the split of a class's
users and addresses over processes, the merge of their outputs, and a run of
two worker processes through a loopback proxy."""
import collections
import csv
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from reqsched_tools import load, multiproc, sessions
from reqsched_tools.loadengine import Engine, Page, Txn


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_split_users_and_addresses_are_disjoint_and_whole(n):
    c = sessions.ClassLoad("g", [f"10.0.0.{i}" for i in range(1, 12)],
                           [(5, 11), (5, 11), (5, 0)])
    shares = [c.share(k, n) for k in range(n)]
    addrs = [a for s in shares for a in s.addrs]
    assert sorted(addrs) == sorted(c.addrs) and len(set(addrs)) == len(c.addrs)
    for t in [x / 10 for x in range(0, 160)]:
        want = round(c.level(t))
        got = [s.users_at(t) for s in shares]
        assert sum(got) == want, (t, got)
        # a share never has more users than addresses when the class has not
        assert all(g <= len(s.addrs) for g, s in zip(got, shares))
        assert sum(s.rate_at(t) for s in shares) == pytest.approx(c.level(t))
    # the users' class-wide numbers: 1 .. 11, each in exactly one share
    nums = [s.number(i) for s in shares for i in range(s.users_at(5))]
    assert sorted(nums) == list(range(1, 12))


def worker_out(d, t0_epoch, txns, pages, bins, spans, worker):
    """A worker's output directory as a --worker run writes it."""
    e = Engine(("127.0.0.1", 1), 10)
    e.t0_epoch, e.elapsed = t0_epoch, 3.0
    e.txns, e.pages, e.bins, e.spans = txns, pages, bins, spans
    e.users = {t.user: {"id": t.user, "class": t.cls, "addr": t.addr} for t in txns}
    os.makedirs(d)
    load.finish(e, d, {"worker": worker, "no_address": 0,
                       "spans": [list(s) for s in spans]}, False, quiet=True)
    return d


def test_merge_moves_times_onto_the_first_clock_and_sums(tmp_path):
    a = worker_out(str(tmp_path / "0"), 1000.0,
                   [Txn("u1.1", "g-1", "g", "10.0.0.1", "GET", "http://o/1", 0.1, 0.1, 0.2,
                        0.3, 100, 200, page="p1", role="main"),
                    Txn("u1.2", "g-1", "g", "10.0.0.1", "GET", "http://o/2", 1.1, 1.1, -1.0,
                        -1.0, 0, 0, "cancelled at end of run")],
                   [Page("p1", "g-1", "g", 0.1, 0.3, 1, 100, 0)],
                   {"g": {0: 120, 1: 5}}, [("g", 0.0, 2.0)], "0/2")
    b = worker_out(str(tmp_path / "1"), 1000.5,
                   [Txn("u2.1", "g-2", "g", "10.0.0.2", "GET", "http://o/3", 0.2, 0.2, 0.4,
                        0.7, 300, 200, conn=2, retried=True)],
                   [], {"g": {0: 330}}, [("g", 0.0, 1.9)], "1/2")
    e = Engine(("127.0.0.1", 1), 10)
    infos = multiproc.merge_into(e, [a, b])
    assert [i["t0_offset_s"] for i in infos] == [0.0, 0.5]
    assert e.t0_epoch == 1000.0 and e.elapsed == pytest.approx(3.5)
    t = {x.rid: x for x in e.txns}
    assert t["u2.1"].start == pytest.approx(0.7) and t["u2.1"].end == pytest.approx(1.2)
    assert t["u2.1"].conn == 2 and t["u2.1"].retried and t["u1.1"].role == "main"
    assert t["u1.2"].end == -1.0 and t["u1.2"].first_byte == -1.0 and t["u1.2"].error
    assert e.bins == {"g": {0: 450, 1: 5}}
    assert e.spans[1] == ("g", 0.5, pytest.approx(2.4))
    assert len(e.pages) == 1 and e.pages[0].end == pytest.approx(0.3)
    rows = {(r["second"], r["class"]): r for r in e.per_second()}
    # second 1: u2.1 ended at 1.2; both users active (g-2 from 0.5 to 2.4)
    assert rows[(1, "g")]["transactions"] == 1 and rows[(1, "g")]["active_users"] == 2
    assert rows[(0, "all")]["bytes"] == 450 and rows[(2, "g")]["active_users"] == 2


def test_a_request_started_just_before_the_stop_is_inside_the_run(tmp_path):
    """The run's duration is written to the precision of the records' times
    (4 decimals), so a request started 0.01 ms before the stop (a response
    ending in the signal's epoll batch starts the next one) is not after the
    run's end (3 decimals put 1.23441 at 1.234, before the start 1.2344)."""
    e = Engine(("127.0.0.1", 1), 10)
    e.t0_epoch, e.elapsed = 1000.0, 1.23441
    e.txns = [Txn("u1.1", "g-1", "g", "10.0.0.1", "GET", "http://o/1", 1.23440, 1.23440,
                  -1.0, -1.0, 0, 0, "cancelled at end of run")]
    assert load.finish(e, str(tmp_path), {}, False, quiet=True) == 0
    info = json.load(open(tmp_path / "replay.json"))
    rows = list(csv.DictReader(open(tmp_path / "requests.csv")))
    assert float(rows[0]["start"]) <= info["duration_s"] == 1.2344


def profile(tmp_path, port, users, seconds):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"servers": "127.0.0.1", "http_port": port, "classes": [
        {"name": "g", "addrs": "127.0.1.1-9", "users": [[0.5, users], [seconds, users]],
         "connections": 2, "pages_per_session": "const:1000", "embedded": "const:2",
         "main_size": "const:500", "embedded_size": "const:500", "think_s": "const:0.05"}]}))
    return str(path)


def test_two_processes_write_one_run(mini_proxy, tmp_path):
    """7 users over 2 processes: 7 distinct users on 7 distinct addresses,
    numbered 1..7; persecond.csv and replay.json are those of one run of
    them all (the counts add up; 7 users active in the steady seconds)."""
    out = str(tmp_path / "out")
    rc = load.main(["sessions", profile(tmp_path, mini_proxy.origin_port, 7, 2.5),
                    "--proxy", f"127.0.0.1:{mini_proxy.port}", "--out", out, "--no-plots",
                    "--procs", "2", "--timeout", "5", "--progress-s", "1"])
    assert rc == 0
    assert not os.path.exists(os.path.join(out, "workers"))
    rep = json.load(open(os.path.join(out, "replay.json")))
    assert rep["procs"] == 2 and [w["worker"] for w in rep["workers"]] == ["0/2", "1/2"]
    assert all(abs(w["t0_offset_s"]) < 0.5 for w in rep["workers"])
    assert sorted(u["id"] for u in rep["users"]) == [f"g-{i}" for i in range(1, 8)]
    assert len({u["addr"] for u in rep["users"]}) == 7
    reqs = list(csv.DictReader(open(os.path.join(out, "requests.csv"))))
    assert len(reqs) == rep["transactions"] == sum(w["transactions"] for w in rep["workers"])
    assert rep["errors"] == 0 and rep["transactions"] > 50
    # the proxy saw connections from the 7 addresses only
    assert set(mini_proxy.accepted) >= {u["addr"] for u in rep["users"]}
    by_user = collections.Counter(r["user"] for r in reqs)
    assert len(by_user) == 7
    rows = [r for r in csv.DictReader(open(os.path.join(out, "persecond.csv")))
            if r["class"] == "all"]
    assert sum(int(r["transactions"]) for r in rows) == rep["completed"]
    assert [int(r["active_users"]) for r in rows][1:3] == [7, 7]


def test_sigint_stops_every_worker_and_still_merges(mini_proxy, tmp_path):
    """SIGINT to the parent: both workers stop early, the run is merged and
    marked interrupted (exit 130), no worker process is left."""
    out = str(tmp_path / "out")
    p = subprocess.Popen([sys.executable, "-m", "reqsched_tools.load", "sessions",
                          profile(tmp_path, mini_proxy.origin_port, 4, 60),
                          "--proxy", f"127.0.0.1:{mini_proxy.port}", "--out", out,
                          "--no-plots", "--procs", "2", "--timeout", "5",
                          "--progress-s", "0.5"], stderr=subprocess.PIPE, text=True)
    time.sleep(multiproc.START_DELAY_S + 1.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "users g=4" in err                       # the summed progress line
    rep = json.load(open(os.path.join(out, "replay.json")))
    assert rep["interrupted"] and rep["duration_s"] < 10 and rep["completed"] > 0
    left = subprocess.run(["pgrep", "-f", "--", f"--out {out}/workers"], capture_output=True)
    assert left.returncode == 1


def test_hosts_through_a_remote_shell(mini_proxy, tmp_path):
    """--hosts with --rsh: each worker is started as RSH HOST COMMAND..., writes
    into its own directory "there", which the parent copies back through the
    same shell and removes. `env` as the shell makes HOST an environment
    assignment, so the two "hosts" run here: the copy and the merge are real."""
    out = str(tmp_path / "out")
    rc = load.main(["sessions", profile(tmp_path, mini_proxy.origin_port, 5, 2.0),
                    "--proxy", f"127.0.0.1:{mini_proxy.port}", "--out", out, "--no-plots",
                    "--hosts", "RS_HOST=a,localhost,RS_HOST=b", "--rsh", "env",
                    "--timeout", "5", "--progress-s", "1"])
    assert rc == 0
    rep = json.load(open(os.path.join(out, "replay.json")))
    assert rep["procs"] == 3 and rep["hosts"] == ["RS_HOST=a", "localhost", "RS_HOST=b"]
    assert [w["worker"] for w in rep["workers"]] == ["0/3", "1/3", "2/3"]
    assert all(w["transactions"] > 0 for w in rep["workers"])
    assert sorted(u["id"] for u in rep["users"]) == [f"g-{i}" for i in range(1, 6)]
    reqs = list(csv.DictReader(open(os.path.join(out, "requests.csv"))))
    assert len(reqs) == rep["transactions"] and rep["errors"] == 0
    assert not os.path.exists(os.path.join(out, "workers"))
    assert not glob.glob(f"/tmp/reqsched-load-{os.getpid()}-*")


def test_hosts_and_procs_exclude_each_other(tmp_path, capsys):
    with pytest.raises(SystemExit):
        load.main(["sessions", "p.json", "--hosts", "a,b", "--procs", "2"])
    assert "--hosts gives the worker processes" in capsys.readouterr().err


def test_a_host_that_cannot_be_reached_fails_the_run(mini_proxy, tmp_path, capsys):
    """A remote shell that fails (here: false) fails the run, naming the worker."""
    rc = load.main(["sessions", profile(tmp_path, mini_proxy.origin_port, 2, 1.0),
                    "--proxy", f"127.0.0.1:{mini_proxy.port}", "--out", str(tmp_path / "o"),
                    "--no-plots", "--hosts", "nowhere", "--rsh", "false", "--timeout", "5"])
    assert rc == 2
    assert "worker 0" in capsys.readouterr().err
