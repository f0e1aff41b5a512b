/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gateway.h - the website-gateway model of the simulator (the mQoS paper's
 * setting): classes of clients send requests through a gateway to one web
 * server whose resources (CPU, disk, bandwidth, ...) have fixed capacities;
 * each kind of request holds a share of each resource while it is served.
 * The gateway forwards everything at once (nqos) or lets libreqsched's
 * mqos, sqos or drf policy release the requests (doc/sim.md).
 */
#ifndef SIM_GATEWAY_H
#define SIM_GATEWAY_H

#include <stdbool.h>
#include <stdio.h>

/* The spec text's first directive is "model gateway". */
bool gateway_spec(const char *text);

/* Parse the spec text (its errors go to err as NAME:LINE: reason), run
 * it and write the result JSON to out. 0, or -1 after printing why. */
int gateway_run(const char *text, const char *name, FILE *out, FILE *err);

#endif /* SIM_GATEWAY_H */
