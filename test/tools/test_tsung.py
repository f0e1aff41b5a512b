# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched-load tsung (tsung.py): the Tsung configuration of a class (parsed
back with ElementTree), the converter on a captured tsung.dump, and a short
run through a loopback proxy when tsung is installed."""
import csv
import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from reqsched_tools import load, sessions, tsung


def model(**kw):
    m = sessions.PageModel(connections=1, pages_per_session=sessions.Dist("const:2"),
                           embedded=sessions.Dist("const:2"),
                           main_size=sessions.Dist("const:3000"),
                           embedded_size=sessions.Dist("const:500"),
                           think_s=sessions.Dist("exp:0.2"))
    for k, v in kw.items():
        setattr(m, k, v)
    return m


def parsed(root, tmp_path):
    path = str(tmp_path / "tsung.xml")
    tsung.write_config(root, path)
    text = open(path).read()
    assert text.startswith('<?xml version="1.0"?>\n<!DOCTYPE tsung SYSTEM')
    return ET.parse(path).getroot()


def test_users_profile_becomes_static_users_with_deadlines(tmp_path):
    c = sessions.ClassLoad("gold", [f"10.10.1.{i}" for i in range(1, 9)],
                           [(2, 6), (3, 6), (2, 0)], "users", model())
    r = parsed(tsung.config(c, ["10.20.0.1"], 8080, 1, 30.0, proxy=("10.10.0.1", 3128)),
               tmp_path)
    assert r.get("dumptraffic") == "protocol"
    (client,) = r.findall("clients/client")
    assert client.get("host") == "localhost" and client.get("use_controller_vm") == "true"
    assert [ip.get("value") for ip in client.findall("ip")] == c.addrs
    (srv,) = r.findall("servers/server")
    assert (srv.get("host"), srv.get("port")) == ("10.10.0.1", "3128")
    opt = r.find("options/option[@name='http_use_server_as_proxy']")
    assert opt is not None and opt.get("value") == "true"
    ld = r.find("load")
    assert ld.get("duration") == "37" and ld.findall("arrivalphase") == []
    users = ld.findall("user")
    life = tsung.user_lifetimes(c)
    assert len(users) == 6 == len(life)
    assert [int(u.get("start_time")) for u in users] == [round(a * 1000) for a, _ in life]
    assert all(u.get("unit") == "millisecond" for u in users)
    assert life[0] == (pytest.approx(0.2), pytest.approx(6.9))   # first in, last out
    assert life[-1] == (pytest.approx(1.9), pytest.approx(5.2))
    by_name = {s.get("name"): s for s in r.findall("sessions/session")}
    assert [u.get("session") for u in users] == [f"v{k}" for k in range(6)]
    assert tsung.lives(c) == "6700\n6100\n5300\n4700\n3900\n3300\n"
    fs = r.find("options/option[@name='file_server']")
    assert fs.get("id") == "lives" and fs.get("value") == "lives.csv"
    for u in users:
        s = by_name[u.get("session")]
        life, deadline = s.findall("setdynvars")[:2]
        assert life.attrib == {"sourcetype": "file", "fileid": "lives", "delimiter": ";",
                               "order": "iter"}
        assert "lookup(life, D)" in deadline.get("code")
        rep = s.find("repeat")
        assert rep.find("while").attrib == {"var": "alive", "eq": "1"}
        pages = rep.findall(".//transaction")
        assert len(pages) == 2                            # pages_per_session 2
        for tr in pages:
            urls = [h.get("url") for h in tr.findall("request/http")]
            assert urls[0].startswith("http://10.20.0.1:8080/page/gold.")
            assert urls[0].endswith("/main") and urls[1].endswith("/obj1") and len(urls) == 3
            sizes = [h.find("http_header[@name='X-Reqsched-Size']").get("value")
                     for h in tr.findall("request/http")]
            assert sizes == ["3000", "500", "500"]
        think = rep.findall(".//thinktime")
        assert think and all(t.attrib == {"value": "0.200", "random": "true"} for t in think)


def test_sessions_per_s_becomes_arrival_phases_direct(tmp_path):
    c = sessions.ClassLoad("s", ["10.1.0.1", "10.1.0.2", "10.1.0.3"], [(2, 10), (1, 10)],
                           "sessions_per_s",
                           model(think_s=sessions.Dist("pareto:1.5:1"), think_max_s=4))
    r = parsed(tsung.config(c, ["10.20.0.1", "10.20.0.2"], 80, 7, 10.0,
                            hosts=("localhost", "gen2")), tmp_path)
    clients = r.findall("clients/client")
    assert [cl.get("host") for cl in clients] == ["localhost", "gen2"]
    assert clients[1].get("use_controller_vm") == "false"
    assert [[ip.get("value") for ip in cl.findall("ip")] for cl in clients] == \
        [["10.1.0.1", "10.1.0.3"], ["10.1.0.2"]]
    assert [s.get("host") for s in r.findall("servers/server")] == ["10.20.0.1", "10.20.0.2"]
    assert r.findall("options/option") == []
    phases = r.findall("load/arrivalphase")
    assert [p.get("duration") for p in phases] == ["1000"] * 3
    # the mean rate of each 1-s step of 0 -> 10/s over 2 s, then 10/s, per hour
    assert [float(p.find("users").get("arrivalrate")) for p in phases] == \
        [pytest.approx(2.5 * 3600), pytest.approx(7.5 * 3600), pytest.approx(36000)]
    ss = r.findall("sessions/session")
    assert len(ss) == tsung.VARIANTS and all(s.get("weight") == "1" for s in ss)
    urls = [h.get("url") for h in ss[0].findall(".//http")]
    assert urls[0].startswith("/page/s.v0.1/main")
    # Pareto think times are drawn into the variants (fixed, capped), not Tsung's
    thinks = [float(t.get("value")) for s in ss for t in s.findall("thinktime")]
    assert all(1.0 <= v <= 4.0 and v == round(v, 3) for v in thinks)
    assert len(set(thinks)) > 5
    assert all(t.get("random") == "false" for t in r.iter("thinktime"))


# captured from a run of reqsched-load tsung against nginx (2026-11-25):
# end time; pid; user; method; server; URL; status; size; duration ms; ...
DUMP = """\
#date;pid;id;http method;host;URL;HTTP status;size;duration;transaction;match;error;tag
1795634470.371245;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.1/main;200;1150;1.849;tr_page;;;
1795634470.371468;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.1/obj1;200;1150;0.110;tr_page;;;
1795634470.371642;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.1/obj2;200;1150;0.106;tr_page;;;
1795634470.479734;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.2/main;200;1150;0.232;tr_page;;;
1795634470.480252;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.2/obj1;200;1150;0.439;tr_page;;;
1795634470.480382;<0.180.0>;1;get;127.0.0.1;http://127.0.0.1:43367/page/a.v0-6700.2/obj2;200;1150;0.070;tr_page;;;
1795634470.673048;<0.181.0>;2;get;127.0.0.1;http://127.0.0.1:43367/page/a.v1-6100.1/main;200;1150;0.688;tr_page;;;
1795634470.67322;<0.181.0>;2;get;127.0.0.1;http://127.0.0.1:43367/page/a.v1-6100.1/obj1;200;1150;0.082;tr_page;;;
1795634471.67338;<0.181.0>;2;get;127.0.0.1;http://127.0.0.1:43367/page/a.v1-6100.1/obj2;200;1150;0.068;tr_page;;;
"""


def test_converter_on_a_captured_dump(tmp_path):
    path = tmp_path / "tsung.dump"
    path.write_text(DUMP)
    e = tsung.convert(str(path), "a")
    t0 = 1795634470.371245 - 0.001849
    assert e.t0_epoch == pytest.approx(t0)
    assert len(e.txns) == 9 and {t.user for t in e.txns} == {"a-1", "a-2"}
    first = e.txns[0]
    assert first.start == 0.0 and first.end == pytest.approx(0.001849, abs=1e-6)
    assert first.role == "main" and first.bytes == 1150 and first.status == 200
    assert first.first_byte == -1.0 and first.addr == ""
    assert [p.objects for p in e.pages] == [3, 3, 3]
    last = e.pages[-1]
    assert last.user == "a-2" and last.end == pytest.approx(1795634471.67338 - t0, abs=1e-6)
    assert last.start == pytest.approx(1795634470.673048 - 0.000688 - t0, abs=1e-6)
    rows = {(r["second"], r["class"]): r for r in e.per_second()}
    assert rows[(0, "a")]["transactions"] == 8 and rows[(1, "a")]["transactions"] == 1
    assert rows[(0, "a")]["bytes"] == 8 * 1150 and rows[(0, "a")]["pages"] == 2
    assert rows[(1, "a")]["active_users"] == 1 and rows[(0, "all")]["active_users"] == 2
    assert rows[(0, "a")]["errors"] == 0


def test_a_profile_of_several_classes_needs_class(tmp_path):
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"classes": [
        {"name": "g", "addrs": "10.0.0.1", "users": [[1, 1]]},
        {"name": "s", "addrs": "10.0.0.2", "users": [[1, 1]]}]}))
    assert load.main(["tsung", str(prof), "--out", str(tmp_path / "o"), "--config-only"]) == 2
    assert load.main(["tsung", str(prof), "--out", str(tmp_path / "o"), "--config-only",
                      "--class", "s"]) == 0
    r = ET.parse(tmp_path / "o" / "tsung.xml").getroot()
    assert [ip.get("value") for ip in r.iter("ip")] == ["10.0.0.2"]


@pytest.mark.skipif(shutil.which("tsung") is None, reason="tsung not installed")
def test_tsung_run_through_a_proxy(mini_proxy, tmp_path):
    """3 users for ~3 s through the loopback proxy to reqsched-origin: the
    origin honours the sizes the config names, every user on its address."""
    prof = tmp_path / "p.json"
    prof.write_text(json.dumps({"servers": "127.0.0.1", "http_port": mini_proxy.origin_port,
                                "classes": [{"name": "g", "addrs": "127.0.2.1-3",
                                             "users": [[0.3, 3], [2.5, 3]],
                                             "pages_per_session": "const:3",
                                             "embedded": "const:2", "main_size": "const:2000",
                                             "embedded_size": "const:700",
                                             "think_s": "const:0.1"}]}))
    out = tmp_path / "out"
    assert load.main(["tsung", str(prof), "--proxy", f"127.0.0.1:{mini_proxy.port}",
                      "--out", str(out), "--no-plots", "--timeout", "5"]) == 0
    reqs = list(csv.DictReader(open(out / "requests.csv")))
    assert len(reqs) > 30 and all(r["status"] == "200" and not r["error"] for r in reqs)
    body = {"main": 2000, "obj1": 700, "obj2": 700}
    # size is the whole answer: the origin's head (same length for a size) + body
    heads = {int(r["bytes"]) - body[r["url"].rsplit("/", 1)[1]] for r in reqs}
    assert len(heads) <= 2 and all(100 < h < 400 for h in heads)
    assert {r["user"] for r in reqs} == {"g-1", "g-2", "g-3"}
    assert set(mini_proxy.accepted) >= {"127.0.2.1", "127.0.2.2", "127.0.2.3"}
    rep = json.load(open(out / "replay.json"))
    assert rep["engine"] == "tsung" and rep["completed"] == len(reqs)
    assert 2.0 < rep["duration_s"] < 4.5


# a tsung.log of a --no-dump run (200 backlogged users, 2026-11-25) without its
# {cpu,...} lines, and the two error counters of a run whose server was down
LOG = """\
# stats: dump at 1795635191
stats: users 200 200
stats: request 39760 9.519749245472791 6.641725487806739 61.414 0.044 0 0
stats: 200 39760 39760
# stats: dump at 1795635199
stats: users 0 200
stats: request 32239 6.708688048636719 5.794132362671028 61.414 0.044 9.519749245472791 39760
stats: 200 32239 71999
stats: error_connect_econnrefused 24 24
stats: error_abort_max_conn_retries 6 6
EndMonitor:{1795,635199,15988}
"""


def test_totals_of_a_tsung_log(tmp_path):
    path = tmp_path / "tsung.log"
    path.write_text(LOG)
    assert tsung.totals(str(path)) == {"requests": 71999, "errors": 30}
