/* SPDX-License-Identifier: GPL-2.0-or-later */
/* out.c - the run's records as files loadengine.py reads back
 * (multiproc.merge_into()): requests.csv, pages.csv, class_bytes.csv with
 * loadengine's columns and number formats, replay.json with the run's
 * start, length, users and activity spans. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "loadc.h"

/* a CSV field as Python's csv module writes it */
static void field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static FILE *open_in(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "w");
}

static int close_ok(FILE *f)
{
	int bad = ferror(f);

	return (fclose(f) || bad) ? -1 : 0;
}

static int write_requests(const struct run *r, const char *dir)
{
	FILE *f = open_in(dir, "requests.csv");

	if (!f)
		return -1;
	fputs("id,user,class,addr,url,start,first_byte,end,bytes,status,error,method,sched,"
	      "conn,page,role,retried\r\n", f);
	for (long i = 0; i < r->nrecs; i++) {
		const struct rec *t = &r->recs[i];
		const char *pid = t->prec >= 0 ? r->precs[t->prec].pid : "";
		const struct user *u = t->u;
		char addr[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &u->a, addr, sizeof(addr));
		fprintf(f, "%s.%d,%s,%s,%s,", *pid ? pid : u->id, t->k, u->id, u->k->name, addr);
		field(f, t->url);
		fprintf(f, ",%.4f,%.4f,%.4f,%llu,%d,", t->start, t->first, t->end,
			(unsigned long long)t->bytes, t->status);
		field(f, t->error ? t->error : "");
		fprintf(f, ",%s,%.4f,%d,%s,%s,%d\r\n", t->method, t->sched, t->conn, pid,
			t->role == 'm' ? "main" : t->role == 'e' ? "embedded" : "", t->retried);
	}
	return close_ok(f);
}

static int write_pages(const struct run *r, const char *dir)
{
	FILE *f = open_in(dir, "pages.csv");

	if (!f)
		return -1;
	fputs("page,user,class,start,end,load_ms,objects,bytes,errors\r\n", f);
	for (long i = 0; i < r->nprecs; i++) {
		const struct prec *p = &r->precs[i];

		fprintf(f, "%s,%s,%s,%.4f,%.4f,", p->pid, p->u->id, p->u->k->name, p->start,
			p->end);
		if (p->end >= 0)
			fprintf(f, "%.1f", (p->end - p->start) * 1000);
		fprintf(f, ",%d,%llu,%d\r\n", p->objects, (unsigned long long)p->bytes,
			p->errors);
	}
	return close_ok(f);
}

static int write_bins(const struct run *r, const char *dir)
{
	FILE *f = open_in(dir, "class_bytes.csv");

	if (!f)
		return -1;
	fputs("bin_start,class,bytes\r\n", f);
	for (int c = 0; c < r->nclasses; c++)
		for (int s = 0; s < r->classes[c].nbins; s++)
			if (r->classes[c].bins[s])
				fprintf(f, "%d.000,%s,%llu\r\n", s, r->classes[c].name,
					(unsigned long long)r->classes[c].bins[s]);
	return close_ok(f);
}

/* names are [A-Za-z0-9._:@+-] (plan.c): JSON strings as they are */
static int write_json(const struct run *r, const char *dir)
{
	FILE *f = open_in(dir, "replay.json");

	if (!f)
		return -1;
	fprintf(f, "{\"t0_epoch\": %.6f, \"duration_s\": %.4f, \"interrupted\": %s, "
		"\"engine_cpu_s\": %.3f,\n", r->t0_epoch, r->elapsed,
		r->interrupted ? "true" : "false", r->cpu);
	fprintf(f, "\"transactions\": %ld, \"completed\": %ld, \"errors\": %ld, "
		"\"no_address\": %ld,\n\"users\": [", r->nrecs, r->ndone, r->nerrors,
		r->no_address + r->refused);
	for (long i = 0; i < r->nstarted; i++) {
		const struct user *u = r->started[i];
		char addr[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &u->a, addr, sizeof(addr));
		fprintf(f, "%s\n {\"id\": \"%s\", \"class\": \"%s\", \"addr\": \"%s\"}",
			i ? "," : "", u->id, u->k->name, addr);
	}
	fputs("],\n\"spans\": [", f);
	for (long i = 0; i < r->nspans; i++)
		fprintf(f, "%s\n [\"%s\", %.4f, %.4f]", i ? "," : "", r->spans[i].k->name,
			r->spans[i].since, r->spans[i].until);
	fputs("]}\n", f);
	return close_ok(f);
}

int write_outputs(const struct run *r, const char *dir)
{
	if (write_requests(r, dir) || write_pages(r, dir) || write_bins(r, dir) ||
	    write_json(r, dir))
		return -1;
	return 0;
}
