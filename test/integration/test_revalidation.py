# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 12 item 8: a revalidation whose 304 cannot update the stored entry.

Squid merges the 304's header fields into the stored response
(StoreEntry::updateOnNotModified()); when the merged header would exceed
reply_header_max_size it throws, Store::Controller::updateOnNotModified()
logs "ERROR: Failed to update a cached response" and
clientReplyContext::handleIMSReply() releases the stored entry and falls
back to processMiss(): a second, unconditional fetch. The scheduler saw
the request once (the revalidation held its slot until the 304 ended); the
fallback fetch is not queued and holds no slot, and its bytes are not
charged to the class (only the miss and the 304 are)."""
from __future__ import annotations

import time

from rsharness import http_get, sched_conf, wait_until
from test_sched import assert_balanced, idle

PAD = 2500                         # each header alone fits 4 KB, both do not
BODY = 20_000


def test_failed_304_update_fetches_again_without_a_slot(squid_factory, scripted_origin):
    sq = squid_factory(sched=sched_conf(window="fixed 1"), cache=True,
                       extra="reply_header_max_size 4 KB\n")
    fresh = ("HTTP/1.1 200 OK\nContent-Length: %d\nCache-Control: max-age=1\n"
             "Last-Modified: Thu, 01 Jan 2026 00:00:00 GMT\nETag: \"v1\"\nX-Pad-A: %s\n"
             "Connection: close\n" % (BODY, "a" * PAD))
    url = scripted_origin.add("/reval", fresh, body=BODY)
    scripted_origin.then("/reval", "HTTP/1.1 304 Not Modified\nCache-Control: max-age=1\nETag: \"v1\"\n"
                                   "X-Pad-B: %s\nConnection: close\n" % ("b" * PAD))
    scripted_origin.then("/reval", fresh, body=BODY)
    assert http_get(sq.port, url, timeout=20).ok
    wait_until(lambda: sq.report().g("ended") == 1, 10, what="the miss to end")
    miss_bytes = sq.report().c("a", "bytes")
    time.sleep(2.2)                 # stale: the next request revalidates
    r = http_get(sq.port, url, timeout=20)
    assert r.ok and r.body_len == BODY, r
    heads = scripted_origin.heads["/reval"]
    assert len(heads) == 3, heads
    assert "if-none-match" in heads[1].lower() or "if-modified-since" in heads[1].lower(), heads[1]
    assert "if-none-match" not in heads[2].lower() and "if-modified-since" not in heads[2].lower(), heads[2]
    assert "Failed to update a cached response" in sq.cache_log()
    rp = idle(sq)
    assert_balanced(rp)
    # the miss and the revalidation; the fallback fetch was never scheduled
    assert rp.g("released") == 2 and rp.g("ended") == 2, rp.text
    reval_bytes = rp.c("a", "bytes") - miss_bytes
    assert reval_bytes < BODY, f"the fallback fetch's body was charged ({reval_bytes:.0f} bytes):\n{rp.text}"
    print(f"failed 304 update: released {rp.g('released'):.0f}, origin requests {len(heads)}, "
          f"class charged {miss_bytes:.0f} + {reval_bytes:.0f} bytes")
