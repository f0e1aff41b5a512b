# SPDX-License-Identifier: GPL-2.0-or-later
"""test/testbed/few_users_analysis.py: the weighted-GPS oracle and the transfer-time analysis."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "testbed"))
import few_users_analysis as fua  # noqa: E402


def test_oracle_without_waits_gives_the_weights():
    # every user always transferring: bytes split exactly by weight
    got = fua.oracle([4.0, 2.0, 1.0], [3, 3, 3], 1e5, (0.0, 0.0), 0.0, 9.5, 1.6, 200.0, 1)
    assert abs(got[0] / got[2] - 4.0) < 0.01 and abs(got[1] / got[2] - 2.0) < 0.01


def test_oracle_share_is_weight_times_users():
    # msf's share: a class's weight times its users (2 x 4 against 6 x 1), no waits
    got = fua.oracle([4.0, 1.0], [2, 6], 1e5, (0.0, 0.0), 0.0, 9.5, 1.6, 200.0, 1)
    assert abs(got[0] / got[1] - 8.0 / 6.0) < 0.01


def test_oracle_waits_cost_the_heavier_class():
    # one user per class: while gold's only user waits, the others take the link
    got = fua.oracle([4.0, 1.0], [1, 1], 1e5, (0.5, 0.5), 0.0, 9.5, 1.6, 500.0, 1)
    assert 1.0 < got[0] / got[1] < 3.8
    more = fua.oracle([4.0, 1.0], [1, 1], 1e5, (0.5, 0.5), 0.5, 9.5, 1.6, 500.0, 1)
    assert more[0] / more[1] < got[0] / got[1]


def test_busy_splits_time_by_who_transfers(tmp_path, capsys):
    csv = tmp_path / "requests.csv"
    csv.write_text("id,user,class,addr,url,start,first_byte,end,bytes,status,error\n"
                   "a,g1,gold,x,u,0,10,20,100000,200,\n"
                   "b,b1,bronze,x,u,0,15,25,50000,200,\n"
                   "c,b1,bronze,x,u,0,-1,-1,0,0,timeout\n")
    assert fua.main(["busy", str(csv), "--from", "10", "--to", "30"]) == 0
    out = capsys.readouterr().out
    assert "gold     transferring 0.50" in out and "bronze   transferring 0.50" in out
    assert "gb  0.25 of the time  KB/s: gold 10  bronze 5" in out
    assert "g-  0.25 of the time  KB/s: gold 10  bronze 0" in out
    assert "--  0.25 of the time" in out
