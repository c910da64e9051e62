/* park.c — semaphores, condvars, barriers and the seed-002 demos: waits,
 * wake latency per hand-over, wakes nobody waited for, broadcast fan-out. */
#include <stdlib.h>
#include <string.h>

#include "prim_test.h"

Test(semaphore, pingpong_records_wake_latency_for_every_handover, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("sem_pingpong", &out);
	cr_assert(tu_has_line(out, "token=400 trywait=50 eagain=1 timedout=1"), "output: %s", out);
	const char *names[] = { "ping", "pong" };
	for (int i = 0; i < 2; i++) {
		json_object *s = prim_row(r, "semaphores", names[i]);
		PRIM_EQ(s, "posts", 200);
		PRIM_EQ(s, "posts_unwaited", 0);
		PRIM_EQ(s, "acquisitions", 200);
		PRIM_EQ(s, "contended", 200);
		PRIM_EQ(s, "waits", 200);
		PRIM_EQ(s, "wakeups", 200);   /* every hand-over: a park and a measured wake */
		PRIM_GT(s, "wake_latency_ns", 0);
		PRIM_GT(s, "max_wake_latency_ns", 0);
	}
	json_object *s = prim_row(r, "semaphores", "spare");
	PRIM_EQ(s, "posts", 50);
	PRIM_EQ(s, "posts_unwaited", 50);
	PRIM_EQ(s, "trywaits", 51);
	PRIM_EQ(s, "trywait_failures", 1);
	PRIM_EQ(s, "acquisitions", 50);
	PRIM_EQ(s, "timeouts", 1);
	PRIM_EQ(s, "wakeups", 0);
	json_object *pw = tu_get(r, "park_wake");
	TU_EQ(tu_int(pw, "wakeups"), 400, "park_wake.wakeups");
	TU_EQ(tu_int(pw, "wakes_unwaited"), 50, "park_wake.wakes_unwaited");
	json_object_put(r);
}

/* Two semaphores in turn, then a hot one and a rare one: every wait and
 * post counted, whichever entry of the thread's cache the record sits in. */
Test(semaphore, semaphores_in_turn_are_each_counted_exactly, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("sem_in_turn", &out);
	cr_assert(tu_has_line(out, "taken=3010"), "output: %s", out);
	static const struct {
		const char *name;
		int64_t trywaits, taken;   /* taken: acquisitions, and posts, none with a waiter */
	} want[] = { { "first", 1000, 2000 }, { "second", 0, 1000 }, { "rare", 0, 10 } };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_object *s = prim_row(r, "semaphores", want[i].name);
		PRIM_EQ(s, "trywaits", want[i].trywaits);
		PRIM_EQ(s, "trywait_failures", 0);
		PRIM_EQ(s, "acquisitions", want[i].taken);
		PRIM_EQ(s, "posts", want[i].taken);
		PRIM_EQ(s, "posts_unwaited", want[i].taken);
	}
	json_object_put(r);
}

Test(condvar, exactly_1000_signals_with_nobody_waiting, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("cond_unwaited", &out);
	cr_assert(tu_has_line(out, "taken=10 turn=2"), "output: %s", out);
	json_object *c = prim_row(r, "condvars", "nobody_cond");
	PRIM_EQ(c, "signals", 1010);
	PRIM_EQ(c, "signals_unwaited", 1000);
	PRIM_EQ(c, "waits", 10);
	PRIM_EQ(c, "wakeups", 10);
	PRIM_GT(c, "wake_latency_ns", 0);
	json_object *h = prim_row(r, "condvars", "herd_cond");
	PRIM_EQ(h, "broadcasts", 3);
	PRIM_EQ(h, "broadcasts_unwaited", 0);
	PRIM_EQ(h, "broadcast_woken", 6);          /* 3 + 2 + 1 */
	PRIM_EQ(h, "futile_after_broadcast", 3);   /* 2 + 1 went back to sleep */
	PRIM_EQ(h, "wakeups", 6);
	json_object *pw = tu_get(r, "park_wake");
	TU_EQ(tu_int(pw, "broadcast_woken"), 6, "park_wake.broadcast_woken");
	TU_EQ(tu_int(pw, "broadcast_back_to_sleep"), 3, "park_wake.broadcast_back_to_sleep");
	TU_EQ(tu_int(pw, "wakes_unwaited"), 1000, "park_wake.wakes_unwaited");
	json_object_put(r);
}

Test(barrier, rounds_imbalance_and_wakes, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("barrier_rounds", &out);
	cr_assert(tu_has_line(out, "rounds=50 serial=50"), "output: %s", out);
	json_object *b = prim_row(r, "barriers", "phase_barrier");
	PRIM_EQ(b, "count", 3);
	PRIM_EQ(b, "waits", 150);
	PRIM_EQ(b, "rounds", 50);
	PRIM_EQ(b, "wakeups", 100);   /* all but the last arrival of each round */
	PRIM_GT(b, "imbalance_ns", 0);
	PRIM_GT(b, "wake_latency_ns", 0);
	TU_EQ(tu_int(tu_get(r, "park_wake"), "parks"), 100, "park_wake.parks");
	json_object_put(r);
}

/* The seed-002 yardsticks with --idle-spin 0: every idle transition parks;
 * convoy shows the parks per iteration and the wake latency. */
static void demo_parks(const char *demo, const char *unit_workers)
{
	char *bin = tu_build_path(demo), *dir = tu_tmpdir();
	const char *argv[] = { bin, "--workers", unit_workers, "--idle-spin", "0", "--iterations", "3000", NULL };
	struct tu_proc p;
	struct tu_opts o = { .preload = true, .dir = dir, .quiet = true, .timeout_s = 60 };
	tu_run(&p, &o, argv);
	tu_assert_exit(&p, 0, demo);
	const char *s = strstr(p.out, " parks="), *w = strstr(p.out, " wakes=");
	cr_assert(s && w, "%s printed no parks/wakes: %s", demo, p.out);
	long long parks = atoll(s + 7), wakes = atoll(w + 7);
	json_object *r = tu_report_dir(dir);
	json_object *pw = tu_get(r, "park_wake");
	TU_EQ(tu_int(pw, "progress_units"), 3000, "%s park_wake.progress_units (one per iteration)", demo);
	cr_assert(tu_int(pw, "parks") >= parks && parks > 0, "%s: convoy parks %lld, the demo's %lld", demo,
		  (long long)tu_int(pw, "parks"), parks);
	json_object *ppu = tu_get(pw, "parks_per_unit");
	cr_assert(ppu && json_object_get_double(ppu) > 0, "%s: parks_per_unit missing", demo);
	cr_assert(tu_int(pw, "wakeups") > 0 && tu_int(pw, "wake_latency_ns") > 0, "%s: no wake latency", demo);
	/* Every unpark signals a parked worker: none unwaited, as many as the demo counts. */
	json_object *conds = tu_array(r, "condvars");
	int64_t signals = 0, unwaited = 0;
	for (size_t i = 0; i < json_object_array_length(conds); i++) {
		json_object *c = json_object_array_get_idx(conds, i);
		if (strcmp(tu_str(c, "name"), "worker_park") == 0) {
			signals += tu_int(c, "signals");
			unwaited += tu_int(c, "signals_unwaited");
		}
	}
	TU_EQ(signals, wakes, "%s: signals to worker_park vs the demo's wakes", demo);
	TU_EQ(unwaited, 0, "%s: unwaited signals", demo);
	json_object_put(r);
}

Test(demos, barrier_idle_spin_0_parks_and_wake_latency, .timeout = 60)
{
	demo_parks("demos/barrier", "2");
}

Test(demos, pingpong_idle_spin_0_parks_and_wake_latency, .timeout = 60)
{
	demo_parks("demos/pingpong", "2");
}

/* The profile of its 20,000 first uses is read by the text report, which
 * counts every lock, not by the JSON one, whose 37 MB this test would only
 * parse (1.5 s of CPU). */
Test(semaphore, post_from_a_signal_handler_inside_the_shim, .timeout = 60)
{
	char *out;
	const char *argv[] = { prim_path("sem_signal_post"), NULL };
	char *profile = prim_run_profile(argv, &out);
	cr_assert(tu_has_line(out, "posts received = posts sent: 1"), "output: %s", out);
	struct tu_proc p;
	tu_run(&p, NULL, (const char *const[]){ tu_convoy(), "report", profile, NULL });
	tu_assert_exit(&p, 0, "convoy report");
	cr_assert(p.err_len == 0, "convoy report printed on stderr:\n%s", p.err);
	cr_assert(strstr(p.out, " 20000 locks,"), "the report does not count the program's 20,000 mutexes:\n%.500s",
		  p.out);
}
