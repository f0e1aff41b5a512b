/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_response.c - libFuzzer target: reqsched-loadc's HTTP response parser
 * (loadgen/http.c), fed in pieces as recv() hands them over.
 *
 * Input: byte 0 picks HEAD (bit 0) and the piece size (1..128 bytes), the
 * rest is what the proxy sends. The parser must use no more than it is
 * given, stop using bytes once the response is done, keep its line buffer
 * under its limits, and count no more body than it was fed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct resp r = { 0 };
	size_t piece, fed = 0;

	if (size < 1)
		return 0;
	resp_start(&r, data[0] & 1);
	piece = (size_t)(data[0] >> 1) + 1;
	data++;
	size--;
	while (fed < size && r.state != R_DONE) {
		size_t n = size - fed < piece ? size - fed : piece;
		const char *err = NULL;
		long used = resp_feed(&r, (const char *)data + fed, n, &err);

		if (used < 0) {
			if (!err)
				abort();
			break;
		}
		if ((size_t)used > n || ((size_t)used < n && r.state != R_DONE))
			abort();
		fed += (size_t)used;
		if (r.len > HTTP_HEAD_MAX || r.body > fed)
			abort();
	}
	if (fed == size && r.state != R_DONE)
		(void)resp_eof(&r);
	resp_free(&r);
	return 0;
}
