# SPDX-License-Identifier: GPL-2.0-or-later
"""reqsched's Python tools: the namespace testbed (reqsched-testbed), the load
generator (reqsched-replay), the report (reqsched-report), the origin server
(reqsched-origin), CBR cross traffic (cbr) and the simulator's scenario driver
(reqsched-sim). doc/testbed.md and doc/sim.md describe them."""
