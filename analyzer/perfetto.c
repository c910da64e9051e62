/* perfetto.c — a profile as Chrome trace-event JSON (the "JSON trace format"
 * that ui.perfetto.dev and chrome://tracing open), built with json-c from the
 * report the JSON renderer writes.
 *
 * One track per thread (thread_name metadata, ordered by the profile's thread
 * index), a slice for each thread's lifetime, a flow arrow from each creating
 * thread to the thread it created, and a counter track of live threads.
 *
 * Without trace events in the profile there is no record of *when* a thread
 * waited, only how long in all; each lifetime slice then holds child slices
 * named "(total)" laid end to end — the shares of that life, not their times
 * — and the trace's metadata says so (convoy_timeline: "aggregate").
 * Timestamps are microseconds from the process start, as the format wants.
 */
#include <stdlib.h>
#include <string.h>

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

int perfetto__write(const struct profile *p, FILE *out)
{
	json_object *report = jsonview__report(p);
	if (!report)
		return -1;
	json_object *process = NULL, *threads = NULL;
	json_object_object_get_ex(report, "process", &process);
	json_object_object_get_ex(report, "threads", &threads);
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
	qsort(changes, 2 * n, sizeof(*changes), by_ts);
	int live = 0;
	for (size_t i = 0; i < 2 * n; i++) {
		live += (int)changes[i][1];
		json_object *c = event("C", "live threads", pid, 0), *args = json_object_new_object();
		put_ts(c, changes[i][0]);
		json_object_object_add(args, "threads", json_object_new_int(live));
		json_object_object_add(c, "args", args);
		json_object_array_add(events, c);
	}
	free(changes);

	json_object *root = json_object_new_object(), *meta = json_object_new_object();
	json_object_object_add(root, "traceEvents", events);
	json_object_object_add(root, "displayTimeUnit", json_object_new_string("ns"));
	json_object_object_add(meta, "convoy_profile", json_object_new_string(p->path));
	json_object_object_add(meta, "command", json_object_new_string(str(process, "cmdline") ? str(process, "cmdline") : ""));
	json_object_object_add(meta, "convoy_timeline", json_object_new_string("aggregate"));
	json_object_object_add(meta, "convoy_timeline_note", json_object_new_string(
		"No trace in this profile: each thread's slice is its lifetime and the '(total)' slices inside it "
		"are its totals laid end to end, not when they happened. Flow arrows are thread creations."));
	json_object_object_add(root, "metadata", meta);
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
