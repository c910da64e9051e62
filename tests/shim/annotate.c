/* The annotation API: unchanged behaviour without the shim; under it the
 * counters, progress points and names land in the report. */
#include <string.h>

#include "testutil.h"

Test(annotate, runs_unchanged_and_records_annotations, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("annotate", &r);
	TU_STREQ(out, "annotated\n", "annotate's output");

	json_object *w = tu_thread_named(r, "annot-w");
	cr_assert(w, "no thread named annot-w");
	json_object *counters = tu_get(w, "counters"), *progress = tu_get(w, "progress");
	TU_EQ(tu_int(counters, "items"), 300, "annot-w counter items");
	TU_EQ(tu_int(counters, "depth"), 7, "annot-w counter depth (set 99, then 7)");
	TU_EQ(tu_int(progress, "batches"), 50, "annot-w progress batches");
	TU_EQ(tu_int(progress, "bytes"), 10000, "annot-w progress bytes");
	json_object *dummy;
	cr_assert(!json_object_object_get_ex(counters, "batches", &dummy), "a progress point among the counters");

	json_object *m = tu_main_thread(r);
	TU_EQ(tu_int(tu_get(m, "counters"), "items"), 5, "main's counter items");
	TU_EQ(json_object_object_length(tu_get(m, "progress")), 0, "main's progress points");

	json_object *q = tu_lock(r, "work queue");
	cr_assert(q, "no lock named \"work queue\" (CONVOY_NAME) in locks[]: %s",
		  json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(q, "acquisitions"), 100, "\"work queue\" acquisitions");
	cr_assert(!tu_lock(r, "q_lock"), "q_lock still listed under its symbol");
	json_object *c = tu_cond(r, "done signal");
	cr_assert(c, "no condvar named \"done signal\"");
	TU_EQ(tu_int(c, "signals_unwaited"), 1, "\"done signal\" signals_unwaited");

	json_object *chk = tu_lock(r, "checked");
	cr_assert(chk, "no lock named \"checked\"");
	TU_EQ(tu_int(chk, "acquisitions"), 4, "\"checked\" acquisitions");
	TU_STREQ(tu_str(chk, "type"), "errorcheck", "type of the named errorcheck mutex");
}
