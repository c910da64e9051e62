/* trace.c — trace-mode events as JSON (see trace.h).
 *
 * Times are nanoseconds from the process start, as in the report. A wait or
 * hold becomes a slice [ts_ns, ts_ns + dur_ns). A woken event carries the
 * stamp of the wake that woke it, which is the waker's wake event's own time
 * on the same object (preload/park.c): matching the two gives a flow from the
 * waker thread to the woken one. Objects are named as the report names them,
 * found by address and generation among its object rows.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "trace.h"
#include "util.h"

static const char *const event_names[] = {
#define CV_X(sym, val, name) [val] = name,
	CV_TRACE_EVENTS(CV_X)
#undef CV_X
};

static const char *const kind_names[] = {
#define CV_X(sym, val, name) [val] = name,
	CV_OBJ_KINDS(CV_X)
#undef CV_X
};

struct wake {
	uint32_t object, thread;
	uint64_t stamp;
};

static int by_object_stamp(const void *a, const void *b)
{
	const struct wake *x = a, *y = b;
	if (x->object != y->object)
		return x->object < y->object ? -1 : 1;
	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

/* names[id]: the report's name for each profile object, NULL for one the
 * report has no row for (found by address and generation). */
static const char **object_names(const struct profile *p, json_object *report)
{
	static const char *const sections[] = { "locks", "condvars", "semaphores", "barriers", "futexes" };
	const char **names = xcalloc(p->nobjects ? p->nobjects : 1, sizeof(*names));
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		json_object *rows, *a, *g, *n;
		if (!json_object_object_get_ex(report, sections[s], &rows))
			continue;
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			json_object *row = json_object_array_get_idx(rows, i);
			if (!json_object_object_get_ex(row, "addr", &a) || !json_object_object_get_ex(row, "generation", &g) ||
			    !json_object_object_get_ex(row, "name", &n))
				continue;
			uint64_t addr = strtoull(json_object_get_string(a), NULL, 16);
			for (size_t id = 0; id < p->nobjects; id++)
				if (p->objects[id].o.addr == addr && p->objects[id].o.generation == json_object_get_int64(g))
					names[id] = json_object_get_string(n);
		}
	}
	return names;
}

json_object *trace__json(const struct profile *p, json_object *report)
{
	if (!p->ntraces)
		return NULL;
	uint64_t t0 = p->process.start_ns, dropped = 0;
	size_t nwakes = 0;
	for (size_t i = 0; i < p->ntraces; i++)
		for (size_t k = 0; k < p->traces[i].t.nevents; k++)
			nwakes += p->traces[i].events[k].type == CV_TRACE_WAKE;
	struct wake *wakes = xcalloc(nwakes ? nwakes : 1, sizeof(*wakes));
	nwakes = 0;
	for (size_t i = 0; i < p->ntraces; i++)
		for (size_t k = 0; k < p->traces[i].t.nevents; k++) {
			const struct cv_trace_event *e = &p->traces[i].events[k];
			if (e->type == CV_TRACE_WAKE)
				wakes[nwakes++] = (struct wake){ e->object, p->traces[i].t.thread, e->ts_ns };
		}
	qsort(wakes, nwakes, sizeof(*wakes), by_object_stamp);

	const char **names = object_names(p, report);
	json_object *root = json_object_new_object(), *threads = json_object_new_array(), *flows = json_object_new_array();
	uint32_t capacity = 0, hold_every = 0;
	for (size_t i = 0; i < p->ntraces; i++) {
		const struct profile_trace *tr = &p->traces[i];
		json_object *th = json_object_new_object(), *events = json_object_new_array();
		json_object_object_add(th, "thread", json_object_new_int64(tr->t.thread));
		json_object_object_add(th, "tid", json_object_new_int(p->threads[tr->t.thread].tid));
		json_object_object_add(th, "dropped", json_object_new_int64((int64_t)tr->t.dropped));
		dropped += tr->t.dropped;
		capacity = tr->t.capacity;
		hold_every = tr->t.hold_every;
		for (size_t k = 0; k < tr->t.nevents; k++) {
			const struct cv_trace_event *e = &tr->events[k];
			/* Waits and holds are stored by their end; the page wants starts. */
			uint64_t start = e->ts_ns - (e->dur_ns < e->ts_ns ? e->dur_ns : e->ts_ns);
			if (start < t0)
				continue;   /* a fork child's inherited events from before its start */
			json_object *ev = json_object_new_object();
			json_object_object_add(ev, "type", json_object_new_string(event_names[e->type]));
			json_object_object_add(ev, "ts_ns", json_object_new_int64((int64_t)(start - t0)));
			json_object_object_add(ev, "dur_ns", json_object_new_int64((int64_t)e->dur_ns));
			const char *name = e->object < p->nobjects ? names[e->object] : NULL;
			json_object_object_add(ev, "object", name ? json_object_new_string(name) : NULL);
			json_object_object_add(ev, "kind", e->object < p->nobjects ?
				json_object_new_string(kind_names[p->objects[e->object].o.kind <= CV_OBJ_FUTEX ?
								  p->objects[e->object].o.kind : 0]) : NULL);
			if (e->type == CV_TRACE_WOKEN) {
				struct wake key = { e->object, 0, e->arg };
				const struct wake *w = bsearch(&key, wakes, nwakes, sizeof(*wakes), by_object_stamp);
				if (w && w->stamp >= t0) {
					json_object_object_add(ev, "woken_by", json_object_new_int64(w->thread));
					json_object *f = json_object_new_object();
					json_object_object_add(f, "from_thread", json_object_new_int64(w->thread));
					json_object_object_add(f, "to_thread", json_object_new_int64(tr->t.thread));
					json_object_object_add(f, "wake_ns", json_object_new_int64((int64_t)(w->stamp - t0)));
					json_object_object_add(f, "woken_ns", json_object_new_int64((int64_t)(e->ts_ns - t0)));
					json_object_object_add(f, "object", name ? json_object_new_string(name) : NULL);
					json_object_array_add(flows, f);
				}
			}
			json_object_array_add(events, ev);
		}
		json_object_object_add(th, "events", events);
		json_object_array_add(threads, th);
	}
	free(wakes);
	free(names);
	json_object_object_add(root, "capacity", json_object_new_int64(capacity));
	json_object_object_add(root, "hold_every", json_object_new_int64(hold_every));
	json_object_object_add(root, "dropped", json_object_new_int64((int64_t)dropped));
	json_object_object_add(root, "threads", threads);
	json_object_object_add(root, "flows", flows);
	return root;
}
