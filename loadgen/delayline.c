/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reqsched-delayline - a propagation delay for the testbed's links, where
 * the kernel has no netem: every packet of an NFQUEUE queue is accepted
 * DELAY after it was queued, in arrival order.
 *
 *   reqsched-delayline --queue N --delay-ms D [--max-packets M]
 *
 * The testbed runs it in the ISP namespace behind
 *   iptables -A FORWARD -j NFQUEUE --queue-num N --queue-bypass
 * so each direction between the gateway and the servers is delayed by D
 * (a round trip by 2 D) before it reaches the link's tbf. SIGTERM or
 * SIGINT: the packets held are accepted at once, then it exits.
 *
 * Invariants: the ring holds the ids of the packets not yet accepted, in
 * arrival order; their due times (arrival + D) are non-decreasing, so the
 * head is always the next one due. The kernel's queue (maxlen = the ring's
 * size) holds every packet in the ring, so the ring fills only if setting
 * that length failed; a packet that then finds it full is accepted at once
 * (counted in "overflow"), never dropped here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#define MAX_CAP (1u << 24)	/* --max-packets bound: indices stay in 32 bits */
#define RECV_BATCH 64

struct held {
	uint32_t id;
	uint64_t due;		/* CLOCK_MONOTONIC ns */
};

struct line {
	struct nfq_q_handle *qh;
	struct held *ring;
	uint32_t cap, head, n;
	uint64_t delay;		/* ns */
	uint64_t passed, overflow;
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void accept_id(struct line *l, uint32_t id)
{
	nfq_set_verdict(l->qh, id, NF_ACCEPT, 0, NULL);
	l->passed++;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg,
		     struct nfq_data *nfa, void *data)
{
	struct line *l = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	uint32_t id;

	(void)qh;
	(void)msg;
	if (!ph)
		return 0;
	id = ntohl(ph->packet_id);
	if (l->n == l->cap) {
		l->overflow++;
		accept_id(l, id);
		return 0;
	}
	l->ring[(l->head + l->n) % l->cap] = (struct held){ id, now_ns() + l->delay };
	l->n++;
	return 0;
}

/* Accepts every held packet due by t; returns ns until the next, or -1. */
static int64_t release_due(struct line *l, uint64_t t)
{
	while (l->n) {
		struct held *h = &l->ring[l->head];

		if (h->due > t)
			return (int64_t)(h->due - t);
		accept_id(l, h->id);
		l->head = (l->head + 1) % l->cap;
		l->n--;
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: reqsched-delayline --queue N --delay-ms D [--max-packets M]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "max-packets", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	struct line l = { .cap = 65536 };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, waiting;
	struct nfq_handle *h;
	char buf[65536] __attribute__((aligned));
	long queue = -1;
	unsigned long cap;
	double delay_ms = -1;
	int c, fd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'q': queue = strtol(optarg, &end, 10); if (*end || queue < 0 || queue > 65535) usage(); break;
		case 'd': delay_ms = strtod(optarg, &end); if (*end || delay_ms < 0 || delay_ms > 10000) usage(); break;
		case 'm': cap = strtoul(optarg, &end, 10); if (*end || !cap || cap > MAX_CAP) usage(); l.cap = (uint32_t)cap; break;
		default: usage();
		}
	}
	if (queue < 0 || delay_ms < 0 || optind != argc)
		usage();
	l.delay = (uint64_t)(delay_ms * 1e6);
	l.ring = calloc(l.cap, sizeof(*l.ring));
	if (!l.ring) {
		perror("reqsched-delayline: calloc");
		return 1;
	}
	h = nfq_open();
	if (!h) {
		perror("reqsched-delayline: nfq_open");
		return 1;
	}
	l.qh = nfq_create_queue(h, (uint16_t)queue, on_packet, &l);
	if (!l.qh || nfq_set_mode(l.qh, NFQNL_COPY_META, 0) < 0) {
		fprintf(stderr, "reqsched-delayline: cannot bind queue %ld: %s\n", queue, strerror(errno));
		return 1;
	}
	nfq_set_queue_maxlen(l.qh, l.cap);
	nfnl_rcvbufsiz(nfq_nfnlh(h), 8u << 20);
	fd = nfq_fd(h);
	{
		int one = 1;

		setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	}
	/* SIGTERM and SIGINT arrive only inside ppoll(): none is lost between
	 * the loop's test and the wait */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &waiting);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fprintf(stderr, "reqsched-delayline: queue %ld, delay %.3f ms\n", queue, delay_ms);
	while (!stopping) {
		int64_t wait = release_due(&l, now_ns());
		struct timespec ts = { 0, 0 };
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (wait >= 0) {
			ts.tv_sec = wait / 1000000000;
			ts.tv_nsec = wait % 1000000000;
		}
		if (ppoll(&p, 1, wait >= 0 ? &ts : NULL, &waiting) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p.revents & POLLIN) {
			ssize_t n;
			int batch = 0;

			/* at most RECV_BATCH messages a pass, so a flood cannot
			 * hold the due packets back */
			while (batch++ < RECV_BATCH &&
			       (n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
				nfq_handle_packet(h, buf, (int)n);
		}
	}
	release_due(&l, UINT64_MAX);
	fprintf(stderr, "reqsched-delayline: %llu packets passed, %llu over the ring\n",
		(unsigned long long)l.passed, (unsigned long long)l.overflow);
	nfq_destroy_queue(l.qh);
	nfq_close(h);
	free(l.ring);
	return 0;
}
