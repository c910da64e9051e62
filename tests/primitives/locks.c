/* locks.c — rwlocks (C and C++ std::shared_mutex), spinlocks and C11 mtx:
 * counted exactly, read and write sides apart, programs unchanged. */
#include "prim_test.h"

Test(rwlock, read_and_write_sides_counted_apart, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("rwlock_sides", &out);
	cr_assert(tu_has_line(out, "table=200 seen=200 trywrlock=EBUSY tryrdlock=0"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "table_lock");
	TU_STREQ(tu_str(l, "kind"), "rwlock", "table_lock.kind");
	/* 1,000 plain reads, the read held while the writer waits, the read
	 * that waits, the read held around trywrlock, one tryrdlock. */
	PRIM_EQ(l, "read_acquisitions", 1004);
	PRIM_EQ(l, "write_acquisitions", 101);
	PRIM_EQ(l, "acquisitions", 1105);
	PRIM_EQ(l, "read_contended", 1);
	PRIM_EQ(l, "write_contended", 1);
	PRIM_EQ(l, "contended", 2);
	PRIM_EQ(l, "writer_waits_behind_readers", 1);
	PRIM_EQ(l, "trylocks", 2);
	PRIM_EQ(l, "trylock_failures", 1);
	PRIM_EQ(l, "handoffs", 1);   /* main's 100 writes, then the writer's one */
	PRIM_GT(l, "read_wait_ns", 0);
	PRIM_GT(l, "write_wait_ns", 0);
	TU_EQ(tu_int(l, "read_wait_ns") + tu_int(l, "write_wait_ns"), tu_int(l, "wait_ns"), "sides add up");
	TU_EQ(tu_split_sum(l, "read_acquisitions"), 1004, "per-thread split of read_acquisitions");
	json_object_put(r);
}

Test(rwlock, cxx_shared_mutex_shows_both_sides, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("shared_mutex", &out);
	cr_assert(tu_has_line(out, "settings=200 seen=200"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "settings_lock");
	TU_STREQ(tu_str(l, "kind"), "rwlock", "settings_lock.kind");
	PRIM_EQ(l, "read_acquisitions", 1002);
	PRIM_EQ(l, "write_acquisitions", 101);
	PRIM_EQ(l, "read_contended", 1);
	PRIM_EQ(l, "write_contended", 1);
	PRIM_EQ(l, "writer_waits_behind_readers", 1);
	PRIM_GT(l, "read_wait_ns", 0);
	PRIM_GT(l, "write_wait_ns", 0);
	json_object_put(r);
}

/* A write lock the shim took itself (preload/rwlock.c, wr_word_taken),
 * released by glibc's unlock with a writer, readers, or both waiting, for
 * each kind of rwlock: each waiter gets the lock (a missed wake hangs the
 * program: the test's timeout), and writers and readers in turn keep
 * their exclusion. */
Test(rwlock, a_writers_unlock_hands_over_to_whoever_waits, .timeout = 60)
{
	char *out;
	json_object *r = prim_run_prog("rwlock_handover", &out);
	static const char *const kinds[] = { "prefer-reader", "prefer-writer-nonrecursive", "pshared" };
	for (int k = 0; k < 3; k++) {
		char want[200];
		snprintf(want, sizeof(want), "%s: writer got it 1/1, readers 2/2, mixed 3/3; counter 20000 of 20000, "
			 "odd seen 0", kinds[k]);
		cr_assert(tu_has_line(out, want), "no line \"%s\" in:\n%s", want, out);
	}
	json_object_put(r);
}

Test(spinlock, spinning_counted_as_on_cpu_wait, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("spin_contend", &out);
	cr_assert(tu_has_line(out, "counter=1001 busy=1"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "counter_lock");
	TU_STREQ(tu_str(l, "kind"), "spinlock", "counter_lock.kind");
	PRIM_EQ(l, "acquisitions", 1004);
	PRIM_EQ(l, "contended", 1);
	PRIM_EQ(l, "trylocks", 1);
	PRIM_EQ(l, "trylock_failures", 1);
	PRIM_EQ(l, "handoffs", 2);   /* main to the spinner and back */
	cr_assert(tu_bool(l, "on_cpu"), "spin time must be marked on-CPU");
	/* main held it until the spinner had used 2 ms of CPU in the lock call */
	cr_assert(tu_int(l, "spin_ns") >= 1000000, "spin_ns %lld < 1 ms", (long long)tu_int(l, "spin_ns"));
	TU_EQ(tu_int(l, "spin_ns"), tu_int(l, "wait_ns"), "spin_ns is the lock's wait");
	/* on-CPU: not counted as blocked lock time of the thread */
	json_object *threads = tu_array(r, "threads");
	int64_t spin = 0, lock_wait = 0;
	for (size_t i = 0; i < json_object_array_length(threads); i++) {
		spin += tu_int(json_object_array_get_idx(threads, i), "spin_ns");
		lock_wait += tu_int(json_object_array_get_idx(threads, i), "lock_wait_ns");
	}
	TU_EQ(spin, tu_int(l, "spin_ns"), "threads' spin_ns");
	TU_EQ(lock_wait, 0, "threads' lock_wait_ns (spinning is not blocking)");
	json_object_put(r);
}

/* An unlock on the shim's fast path that finds a sleeping waiter in the
 * lock word it exchanges wakes it with the stamp, every time
 * (progs/mutex_wakes.c). */
Test(mutex, every_waiter_woken_by_a_fast_unlock_is_stamped, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("mutex_wakes", &out);
	cr_assert(tu_has_line(out, "counter=20"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "wake_lock");
	PRIM_EQ(l, "acquisitions", 40);
	PRIM_EQ(l, "contended", 20);
	PRIM_EQ(l, "wakeups", 20);
	PRIM_GT(l, "wake_latency_ns", 0);
	json_object_put(r);
}

Test(c11, mtx_and_cnd_map_onto_mutex_and_condvar_records, .timeout = 30)
{
	char *out;
	json_object *r = prim_run_prog("c11_mtx", &out);
	cr_assert(tu_has_line(out, "counter=501 busy=1"), "output: %s", out);
	json_object *l = prim_row(r, "locks", "c11_lock");
	TU_STREQ(tu_str(l, "kind"), "mutex", "c11_lock.kind");
	TU_STREQ(tu_str(l, "type"), "normal c11", "c11_lock.type");
	/* 500 pairs, main's hold, the other thread's, main's relock for the
	 * signal, main's hold around the trylock (cnd_wait's re-acquisition is
	 * not a lock call) */
	PRIM_EQ(l, "acquisitions", 504);
	PRIM_EQ(l, "contended", 1);
	PRIM_EQ(l, "trylocks", 1);
	PRIM_EQ(l, "trylock_failures", 1);
	/* main to the other thread, back for the signal, and back after the
	 * other thread's cnd_wait re-acquired it */
	PRIM_EQ(l, "handoffs", 3);
	PRIM_EQ(l, "wakeups", 1);   /* main's unlock handed it to the sleeping thread */
	PRIM_GT(l, "wake_latency_ns", 0);
	json_object *c = prim_row(r, "condvars", "c11_cond");
	PRIM_EQ(c, "signals", 6);
	PRIM_EQ(c, "signals_unwaited", 5);
	PRIM_EQ(c, "waits", 1);
	PRIM_EQ(c, "wakeups", 1);
	json_object_put(r);
}
