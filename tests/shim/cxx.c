/* A C++ program: std::mutex, std::condition_variable, std::thread. */
#include <string.h>

#include "testutil.h"

Test(cxx, std_mutex_exact_counts, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("cxx_mutex", &r);
	TU_STREQ(out, "counter 20000\n", "cxx_mutex output");
	json_object *m = tu_lock(r, "g_mutex");
	cr_assert(m, "no lock named g_mutex in locks[]: %s", json_object_to_json_string(tu_array(r, "locks")));
	TU_EQ(tu_int(m, "acquisitions"), 20000, "g_mutex acquisitions");
	TU_EQ(json_object_array_length(tu_array(m, "threads")), 2, "threads in g_mutex's split");
	TU_EQ(tu_split_sum(m, "acquisitions"), 20000, "g_mutex split sum");
	json_object *cv = tu_cond(r, "g_cv");
	cr_assert(cv, "no condvar named g_cv in condvars[]: %s", json_object_to_json_string(tu_array(r, "condvars")));
	TU_EQ(tu_int(cv, "signals"), 150, "g_cv signals (notify_one)");
	TU_EQ(tu_int(cv, "signals_unwaited"), 100, "g_cv signals_unwaited");
	TU_LE(50, tu_int(cv, "waits"), "g_cv waits");
	TU_EQ(json_object_array_length(tu_array(r, "threads")), 4, "threads[] (main + 3 std::thread)");
}
