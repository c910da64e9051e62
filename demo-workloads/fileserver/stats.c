/* stats.c — what the server measured, printed at shutdown and as JSON.
 *
 * Latency is recorded per request by the worker that completed it, from the
 * moment the connection's readiness event was seen (by the dispatcher or the
 * worker polling) to the last byte handed to the kernel: queueing in the
 * scheduler included, the client's own time not. Each worker keeps its own
 * histogram (no shared writes on the hot path); they are merged at the end.
 * Buckets are powers of two, so a percentile is reported as its bucket's
 * upper bound: the true value is at most that and more than half of it.
 */
#include "fileserver.h"

#include <json-c/json.h>
#include <string.h>

void fs_hist_add(struct fs_hist *h, uint64_t ns)
{
	unsigned b = ns ? 64 - (unsigned)__builtin_clzll(ns) : 0;
	if (b >= FS_HIST_BUCKETS)
		b = FS_HIST_BUCKETS - 1;
	h->bucket[b]++;
	h->count++;
}

void fs_hist_merge(struct fs_hist *into, const struct fs_hist *h)
{
	for (unsigned b = 0; b < FS_HIST_BUCKETS; b++)
		into->bucket[b] += h->bucket[b];
	into->count += h->count;
}

uint64_t fs_hist_quantile(const struct fs_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	/* The rank of the q-quantile, 1-based, rounded up. */
	uint64_t rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < FS_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank)
			return b ? (b >= 63 ? UINT64_MAX : (1ull << b) - 1) : 0;
	}
	return UINT64_MAX;
}

static const double quantiles[] = { 0.50, 0.95, 0.99, 0.999 };
static const char *const quantile_names[] = { "p50", "p95", "p99", "p99.9" };
#define NQ (sizeof quantiles / sizeof quantiles[0])

static bool uses_deques(fs_sched s)
{
	return s != FS_SCHED_RR;
}

static void totals(struct fs_server *s, struct fs_hist *all, uint64_t *requests,
                   uint64_t *status)
{
	memset(all, 0, sizeof *all);
	*requests = 0;
	memset(status, 0, FS_STATUS_COUNT * sizeof *status);
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		struct fs_worker *w = &s->workers[i];
		fs_hist_merge(all, &w->latency);
		*requests += atomic_load(&w->requests);
		for (unsigned k = 0; k < FS_STATUS_COUNT; k++)
			status[k] += w->status[k];
	}
}

void fs_stats_print(struct fs_server *s, FILE *out)
{
	struct fs_hist all;
	uint64_t requests, status[FS_STATUS_COUNT];
	totals(s, &all, &requests, status);
	double secs = (double)(s->stopped_ns - s->started_ns) / 1e9;
	fprintf(out, "fileserver: %s, %u workers, %llu responses in %.2f s (%.0f/s)\n",
	        fs_sched_name(s->cfg.sched), s->cfg.workers,
	        (unsigned long long)requests, secs, secs > 0 ? (double)requests / secs : 0);
	fprintf(out, "latency (event seen -> response sent; log2 buckets, upper bounds):");
	for (unsigned q = 0; q < NQ; q++)
		fprintf(out, " %s <= %.1f us", quantile_names[q],
		        (double)fs_hist_quantile(&all, quantiles[q]) / 1e3);
	fprintf(out, "\nstatus:");
	for (unsigned k = 0; k < FS_STATUS_COUNT; k++)
		if (status[k])
			fprintf(out, " %d x%llu", fs_status_code[k], (unsigned long long)status[k]);
	fprintf(out, "; refused (full) %llu, timed out %llu\n",
	        (unsigned long long)atomic_load(&s->refused_full),
	        (unsigned long long)atomic_load(&s->timed_out));
	fprintf(out, "%-7s %10s %10s %10s %12s\n", "worker", "responses",
	        uses_deques(s->cfg.sched) ? "steals" : "-",
	        uses_deques(s->cfg.sched) ? "attempts" : "-",
	        uses_deques(s->cfg.sched) ? "failed CAS" : "queue waits");
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		struct fs_worker *w = &s->workers[i];
		fprintf(out, "%-7u %10llu %10llu %10llu %12llu\n", i,
		        (unsigned long long)atomic_load(&w->requests),
		        (unsigned long long)w->steals,
		        (unsigned long long)w->steal_attempts,
		        (unsigned long long)(uses_deques(s->cfg.sched)
		                             ? atomic_load(&w->cas_failed)
		                             : atomic_load(&w->queue_contended)));
	}
}

static json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

int fs_stats_write_json(struct fs_server *s, const char *path)
{
	struct fs_hist all;
	uint64_t requests, status[FS_STATUS_COUNT];
	totals(s, &all, &requests, status);
	json_object *root = json_object_new_object();
	json_object_object_add(root, "scheduler", json_object_new_string(fs_sched_name(s->cfg.sched)));
	json_object_object_add(root, "workers", u64(s->cfg.workers));
	json_object_object_add(root, "requests", u64(requests));
	json_object_object_add(root, "elapsed_ns", u64(s->stopped_ns - s->started_ns));
	json_object *lat = json_object_new_object();
	for (unsigned q = 0; q < NQ; q++)
		json_object_object_add(lat, quantile_names[q], u64(fs_hist_quantile(&all, quantiles[q])));
	json_object *buckets = json_object_new_array();
	for (unsigned b = 0; b < FS_HIST_BUCKETS; b++)
		json_object_array_add(buckets, u64(all.bucket[b]));
	json_object_object_add(lat, "log2_buckets", buckets);
	json_object_object_add(root, "latency_ns", lat);
	json_object *st = json_object_new_object();
	for (unsigned k = 0; k < FS_STATUS_COUNT; k++) {
		char code[8];
		snprintf(code, sizeof code, "%d", fs_status_code[k]);
		json_object_object_add(st, code, u64(status[k]));
	}
	json_object_object_add(root, "status", st);
	json_object_object_add(root, "refused_full", u64(atomic_load(&s->refused_full)));
	json_object_object_add(root, "timed_out", u64(atomic_load(&s->timed_out)));
	json_object *ws = json_object_new_array();
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		struct fs_worker *w = &s->workers[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "responses", u64(atomic_load(&w->requests)));
		json_object_object_add(o, "steals", u64(w->steals));
		json_object_object_add(o, "steal_attempts", u64(w->steal_attempts));
		if (uses_deques(s->cfg.sched))
			json_object_object_add(o, "deque_failed_cas", u64(atomic_load(&w->cas_failed)));
		else
			json_object_object_add(o, "queue_contended", u64(atomic_load(&w->queue_contended)));
		json_object_array_add(ws, o);
	}
	json_object_object_add(root, "per_worker", ws);
	int err = 0;
	const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f || fprintf(f, "%s\n", text) < 0)
		err = -1;
	if (f && f != stdout && fclose(f) != 0)
		err = -1;
	json_object_put(root);
	return err;
}
