/* perfetto.c — a profile as Chrome trace-event JSON (the "JSON trace format"
 * that ui.perfetto.dev and chrome://tracing open), built with json-c from the
 * report the JSON renderer writes.
 *
 * One track per thread (thread_name metadata, ordered by the profile's thread
 * index), a slice for each thread's lifetime, a flow arrow from each creating
 * thread to the thread it created, and a counter track of live threads.
 *
 * A profile recorded in trace mode (its report has "trace", analyzer/trace.c)
 * adds a slice for each wait and sampled hold, at its time, a flow arrow from
 * each waker to the thread it woke, and a counter of threads waiting
 * (convoy_timeline: "trace"). Without trace events there is no record of
 * *when* a thread waited, only how long in all; each lifetime slice then
 * holds child slices named "(total)" laid end to end — the shares of that
 * life, not their times — and otherData says so (convoy_timeline:
 * "aggregate").
 * Timestamps are microseconds from the process start, as the format wants.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "jsonview.h"
#include "perfetto.h"
#include "profile.h"
#include "util.h"

static double us(int64_t ns) { return (double)ns / 1000.0; }

static int64_t num(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;
	return o && json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static json_object *event(const char *ph, const char *name, int pid, int tid)
{
	json_object *e = json_object_new_object();
	json_object_object_add(e, "ph", json_object_new_string(ph));
	json_object_object_add(e, "name", json_object_new_string(name));
	json_object_object_add(e, "pid", json_object_new_int(pid));
	json_object_object_add(e, "tid", json_object_new_int(tid));
	return e;
}

static void put_ts(json_object *e, int64_t ts_ns)
{
	json_object_object_add(e, "ts", json_object_new_double(us(ts_ns)));
}

static json_object *metadata(const char *what, int pid, int tid, const char *key, json_object *value)
{
	json_object *e = event("M", what, pid, tid), *args = json_object_new_object();
	json_object_object_add(args, key, value);
	json_object_object_add(e, "args", args);
	return e;
}

static json_object *slice(const char *name, const char *cat, int pid, int tid, int64_t ts_ns, int64_t dur_ns)
{
	json_object *e = event("X", name, pid, tid);
	json_object_object_add(e, "cat", json_object_new_string(cat));
	put_ts(e, ts_ns);
	json_object_object_add(e, "dur", json_object_new_double(us(dur_ns)));
	return e;
}

/* The totals of one thread's life, as child slices end to end. */
static void aggregate_slices(json_object *events, json_object *t, int pid, int tid)
{
	json_object *by_kind = NULL;
	json_object_object_get_ex(t, "wait_ns_by_kind", &by_kind);
	const struct { const char *name; int64_t ns; } parts[] = {
		{ "on CPU (total)", num(t, "cpu_ns") },
		{ "waiting for locks (total)", num(t, "lock_wait_ns") },
		{ "parked on condvars (total)", num(t, "cond_wait_ns") },
		{ "waiting on futexes and semaphores (total)", num(by_kind, "futex") + num(by_kind, "semaphore") },
		{ "joining and at barriers (total)", num(t, "join_wait_ns") + num(by_kind, "barrier") },
		{ "runnable, no CPU (total)", num(t, "run_delay_ns") },
	};
	int64_t at = num(t, "start_ns"), end = at + num(t, "lifetime_ns");
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && at < end; i++) {
		if (parts[i].ns <= 0)
			continue;
		int64_t dur = parts[i].ns < end - at ? parts[i].ns : end - at;
		json_object *e = slice(parts[i].name, "aggregate", pid, tid, at, dur);
		json_object *args = json_object_new_object();
		json_object_object_add(args, "total_ns", json_object_new_int64(parts[i].ns));
		json_object_object_add(args, "note", json_object_new_string(
			"the thread's total over its life, not when it happened (no trace in this profile)"));
		json_object_object_add(e, "args", args);
		json_object_array_add(events, e);
		at += dur;
	}
}

static int by_ts(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (int)(y[1] - x[1]);   /* starts before ends at one time */
}

/* A counter track from (time, +1/-1) changes, in any order. */
static void counter_track(json_object *events, const char *name, const char *key, int64_t (*changes)[2], size_t n,
			  int pid)
{
	if (!n)
		return;
	qsort(changes, n, sizeof(*changes), by_ts);
	int64_t level = 0;
	for (size_t i = 0; i < n; i++) {
		level += changes[i][1];
		json_object *c = event("C", name, pid, 0), *args = json_object_new_object();
		put_ts(c, changes[i][0]);
		json_object_object_add(args, key, json_object_new_int64(level));
		json_object_object_add(c, "args", args);
		json_object_array_add(events, c);
	}
}

static int tid_of(json_object *threads, int64_t index)
{
	json_object *t = json_object_array_get_idx(threads, (size_t)index);
	return t ? (int)num(t, "tid") : 0;
}

/* Trace mode: waits and holds at their times, wake flows, threads waiting. */
static void trace_events(json_object *events, json_object *trace, json_object *threads, int pid)
{
	json_object *tthreads = NULL, *flows = NULL;
	json_object_object_get_ex(trace, "threads", &tthreads);
	json_object_object_get_ex(trace, "flows", &flows);
	size_t nchanges = 0, cap = 0;
	int64_t (*changes)[2] = NULL;
	for (size_t i = 0; tthreads && i < json_object_array_length(tthreads); i++) {
		json_object *th = json_object_array_get_idx(tthreads, i), *evs = NULL;
		int tid = (int)num(th, "tid");
		json_object_object_get_ex(th, "events", &evs);
		for (size_t k = 0; evs && k < json_object_array_length(evs); k++) {
			json_object *ev = json_object_array_get_idx(evs, k);
			const char *type = str(ev, "type"), *object = str(ev, "object");
			int64_t ts = num(ev, "ts_ns"), dur = num(ev, "dur_ns");
			if (!type || (strcmp(type, "wait") && strcmp(type, "hold")))
				continue;   /* wakes and woken ends become flows */
			char name[512];
			snprintf(name, sizeof(name), "%s %s", !strcmp(type, "wait") ? "wait for" : "hold",
				 object ? object : "(an object created after the snapshot)");
			json_object *e = slice(name, type, pid, tid, ts, dur), *args = json_object_new_object();
			const char *kind = str(ev, "kind");
			if (kind)
				json_object_object_add(args, "kind", json_object_new_string(kind));
			json_object_object_add(e, "args", args);
			json_object_array_add(events, e);
			if (!strcmp(type, "wait")) {
				if (nchanges + 2 > cap) {
					cap = cap ? cap * 2 : 256;
					changes = realloc(changes, cap * sizeof(*changes));
					if (!changes) {
						cv_error("out of memory");
						abort();
					}
				}
				changes[nchanges][0] = ts, changes[nchanges++][1] = 1;
				changes[nchanges][0] = ts + dur, changes[nchanges++][1] = -1;
			}
		}
	}
	for (size_t i = 0; flows && i < json_object_array_length(flows); i++) {
		json_object *f = json_object_array_get_idx(flows, i);
		json_object *s = event("s", "wake", pid, tid_of(threads, num(f, "from_thread")));
		json_object *e = event("f", "wake", pid, tid_of(threads, num(f, "to_thread")));
		for (int k = 0; k < 2; k++) {
			json_object *x = k ? e : s;
			json_object_object_add(x, "cat", json_object_new_string("wake"));
			json_object_object_add(x, "id", json_object_new_int64((int64_t)(1u << 30) + (int64_t)i));
			put_ts(x, num(f, k ? "woken_ns" : "wake_ns"));
			json_object_array_add(events, x);
		}
		json_object_object_add(e, "bp", json_object_new_string("e"));
	}
	counter_track(events, "threads waiting", "threads", changes, nchanges, pid);
	free(changes);
}


int perfetto__write(struct analysis *a, FILE *out)
{
	if (!a->diagnosed)
		analysis__diagnose(a);
	const struct profile *p = a->p;
	json_object *report = jsonview__report(a);
	json_object *process = NULL, *threads = NULL, *trace = NULL;
	json_object_object_get_ex(report, "process", &process);
	json_object_object_get_ex(report, "threads", &threads);
	json_object_object_get_ex(report, "trace", &trace);
	int pid = (int)num(process, "pid");
	size_t n = threads ? json_object_array_length(threads) : 0;
	json_object *events = json_object_new_array();

	json_object_array_add(events, metadata("process_name", pid, 0, "name",
					       json_object_new_string(str(process, "comm") ? str(process, "comm") : "?")));
	/* Live threads over time: +1 at each start, -1 at each end. */
	int64_t (*changes)[2] = xcalloc(2 * n + 1, sizeof(*changes));
	for (size_t i = 0; i < n; i++) {
		json_object *t = json_object_array_get_idx(threads, i);
		int tid = (int)num(t, "tid");
		int64_t start = num(t, "start_ns"), life = num(t, "lifetime_ns");
		const char *name = str(t, "name");
		char fallback[32];
		if (!name || !*name) {
			snprintf(fallback, sizeof(fallback), "tid %d", tid);
			name = fallback;
		}
		json_object_array_add(events, metadata("thread_name", pid, tid, "name", json_object_new_string(name)));
		json_object_array_add(events, metadata("thread_sort_index", pid, tid, "sort_index", json_object_new_int((int)i)));
		json_object *life_slice = slice(name, "lifetime", pid, tid, start, life), *args = json_object_new_object();
		static const char *const keys[] = { "cpu_ns", "lock_wait_ns", "cond_wait_ns", "join_wait_ns", "run_delay_ns",
						    "voluntary_switches", "involuntary_switches" };
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			json_object_object_add(args, keys[k], json_object_new_int64(num(t, keys[k])));
		const char *routine = str(t, "start_routine");
		if (routine)
			json_object_object_add(args, "start_routine", json_object_new_string(routine));
		json_object_object_add(life_slice, "args", args);
		json_object_array_add(events, life_slice);
		if (!trace)
			aggregate_slices(events, t, pid, tid);

		/* A flow arrow from the creating thread, at the moment of creation. */
		int creator = (int)num(t, "creator_tid");
		if (creator) {
			json_object *s = event("s", "create", pid, creator), *f = event("f", "create", pid, tid);
			for (int k = 0; k < 2; k++) {
				json_object *e = k ? f : s;
				json_object_object_add(e, "cat", json_object_new_string("thread"));
				json_object_object_add(e, "id", json_object_new_int((int)i));
				put_ts(e, start);
				json_object_array_add(events, e);
			}
			json_object_object_add(f, "bp", json_object_new_string("e"));
		}
		changes[2 * i][0] = start, changes[2 * i][1] = 1;
		changes[2 * i + 1][0] = start + life, changes[2 * i + 1][1] = -1;
	}
	counter_track(events, "live threads", "threads", changes, 2 * n, pid);
	free(changes);
	if (trace)
		trace_events(events, trace, threads, pid);

	json_object *root = json_object_new_object(), *meta = json_object_new_object();
	json_object_object_add(root, "traceEvents", events);
	json_object_object_add(root, "displayTimeUnit", json_object_new_string("ns"));
	json_object_object_add(meta, "convoy_profile", json_object_new_string(p->path));
	json_object_object_add(meta, "command", json_object_new_string(str(process, "cmdline") ? str(process, "cmdline") : ""));
	json_object_object_add(meta, "convoy_timeline", json_object_new_string(trace ? "trace" : "aggregate"));
	if (trace) {
		char note[400];
		snprintf(note, sizeof(note), "Waits and sampled holds (1 in %lld hold samples) at their times, from the "
			 "trace recorded with the profile; %lld older events were dropped (each thread's ring keeps its "
			 "newest %lld). Flow arrows are wakes (waker to woken) and thread creations.",
			 (long long)num(trace, "hold_every"), (long long)num(trace, "dropped"),
			 (long long)num(trace, "capacity"));
		json_object_object_add(meta, "convoy_timeline_note", json_object_new_string(note));
	} else
		json_object_object_add(meta, "convoy_timeline_note", json_object_new_string(
			"No trace in this profile (record one with convoy run --trace): each thread's slice is its "
			"lifetime and the '(total)' slices inside it are its totals laid end to end, not when they "
			"happened. Flow arrows are thread creations."));
	json_object_object_add(root, "otherData", meta);
	fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), out);
	fputc('\n', out);
	json_object_put(root);
	json_object_put(report);
	if (fflush(out) != 0 || ferror(out)) {
		cv_error("export: cannot write the output");
		return -1;
	}
	return 0;
}
