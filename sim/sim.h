/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h - the discrete-event simulator: clients, servers, the bottleneck
 * downlink (link.h) and libreqsched driving the release of requests.
 *
 * The library sees exactly what a proxy would: rs_enqueue() when a client
 * sends a request, the release callback, rs_on_first_byte() with the
 * Content-Length when the response starts (after the server's first-byte
 * delay), rs_on_bytes() every report_granularity seconds of simulated time
 * with the bytes delivered since the last report, rs_on_end() when the last
 * byte arrived, and rs_on_timer() at rs_next_deadline().
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdio.h>

#include "spec.h"

/* Run one spec and write its result JSON to out. Returns 0, or -1 after
 * printing the reason to err (a library error counts as a failure). */
int sim_run(const struct spec *sp, FILE *out, FILE *err);

#endif /* SIM_SIM_H */
