/* annotate.c — the annotation API of include/convoy.h, as the shim defines it.
 * Programs reach these through weak references; without the shim they are
 * never called. */
#include <string.h>

#define CONVOY_SHIM_BUILD
#include "convoy.h"
#include "shim.h"

/* A name the program passed may not outlive the call: keep a copy. */
static const char *copy_name(const char *name)
{
	size_t n = strnlen(name, 255);
	char *p = cv__alloc(n + 1);
	if (p)
		memcpy(p, name, n);
	return p;
}

/* t's counters (shim.h): made once; a signal handler that came in between
 * and made them first keeps its own. */
static bool counters_made(struct cv_thread *t)
{
	size_t size = sizeof(*t->counters) * CV_MAX_COUNTERS;
	struct cv_named_counter *fresh = cv__alloc(size), *none = NULL;
	if (!fresh)
		return false;
	if (!__atomic_compare_exchange_n(&t->counters, &none, fresh, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		cv__free(fresh, size);
	return true;
}

/* The calling thread's counter called name, created on first use. Counters
 * are looked up by the name's address first: the annotation macros pass
 * literals, so that is one compare. */
static struct cv_named_counter *counter(const char *name, uint32_t kind)
{
	struct cv_thread *t = cv__current();
	if (!t && !(t = cv__thread_slow()))
		return NULL;
	if (!name)
		return NULL;
	for (uint32_t i = 0; i < t->ncounters; i++)
		if (t->counters[i].kind == kind && t->counters[i].key == name)
			return &t->counters[i];
	for (uint32_t i = 0; i < t->ncounters; i++)
		if (t->counters[i].kind == kind && strcmp(t->counters[i].name, name) == 0)
			return &t->counters[i];
	if (t->ncounters == CV_MAX_COUNTERS) {
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			cv__warn("more than %d counters on one thread; '%s' and later ones are not recorded",
				 CV_MAX_COUNTERS, name);
		return NULL;
	}
	if (!t->counters && !counters_made(t))
		return NULL;
	struct cv_named_counter *c = &t->counters[t->ncounters];
	if (!(c->name = copy_name(name)))
		return NULL;
	c->key = name;
	c->kind = kind;
	__atomic_store_n(&t->ncounters, t->ncounters + 1, __ATOMIC_RELEASE);
	return c;
}

CV_EXPORT void convoy_progress(const char *name, uint64_t units)
{
	struct cv_named_counter *c = counter(name, CV_COUNTER_PROGRESS);
	if (c)
		CV_BUMP(&c->value, (int64_t)units);
}

CV_EXPORT void convoy_counter_add(const char *name, int64_t delta)
{
	struct cv_named_counter *c = counter(name, CV_COUNTER_USER);
	if (c)
		CV_BUMP(&c->value, delta);
}

CV_EXPORT void convoy_counter_set(const char *name, int64_t value)
{
	struct cv_named_counter *c = counter(name, CV_COUNTER_USER);
	if (c)
		CV_STORE(&c->value, value);
}

CV_EXPORT void convoy_name_object(const void *object, const char *name)
{
	if (!cv__current() && !cv__thread_slow())
		return;
	struct cv_obj *o = object && name ? cv__object_of(object, CV_OBJ_UNKNOWN) : NULL;
	if (o)
		__atomic_store_n(&o->name, copy_name(name), __ATOMIC_RELEASE);
}
