/* Unchanged semantics: each program runs natively and under the shim; stdout
 * (every return code, by name) and the exit status must be identical, and
 * the native output must show the behaviour POSIX/glibc specify, so that
 * "identical" is not "identically broken". */
#include <string.h>

#include "testutil.h"

static void expect_lines(const char *prog, const char *out, const char *const lines[])
{
	for (size_t i = 0; lines[i]; i++)
		cr_expect(tu_has_line(out, lines[i]), "%s: no line \"%s\" in its output:\n%s", prog, lines[i], out);
}

#define SAME(prog, ...)                                                       \
	do {                                                                  \
		const char *out_ = tu_same_behaviour(prog, NULL);             \
		static const char *const lines_[] = { __VA_ARGS__, NULL };    \
		expect_lines(prog, out_, lines_);                             \
	} while (0)

Test(semantics, errorcheck_relock_edeadlk, .timeout = 30)
{
	SAME("sem_errorcheck", "relock: 35 EDEADLK", "timedlock by owner: 35 EDEADLK",
	     "trylock by owner: 16 EBUSY", "unlock again: 1 EPERM", "destroy while locked: 16 EBUSY",
	     "destroy: 0 OK");
}

Test(semantics, trylock_held_ebusy, .timeout = 30)
{
	SAME("sem_trylock_busy", "trylock held by other: 16 EBUSY", "trylock free: 0 OK",
	     "trylock held by self: 16 EBUSY");
}

Test(semantics, recursive_lock_three_unlock_three, .timeout = 30)
{
	SAME("sem_recursive", "lock 2: 0 OK", "trylock 3: 0 OK", "timedlock 4: 0 OK",
	     "other trylock while held 4 deep: 16 EBUSY", "other trylock while held 1 deep: 16 EBUSY",
	     "other trylock when free: 0 OK", "unlock 5: 1 EPERM");
}

Test(semantics, timedlock_etimedout, .timeout = 30)
{
	SAME("sem_timedlock", "timedlock held (normal): 110 ETIMEDOUT",
	     "timedlock held (errorcheck): 110 ETIMEDOUT", "timedlock held, deadline passed: 110 ETIMEDOUT",
	     "timedlock held, invalid deadline: 22 EINVAL", "timedlock free: 0 OK");
}

Test(semantics, robust_eownerdead_consistent, .timeout = 30)
{
	SAME("sem_robust", "lock (owner died): 130 EOWNERDEAD", "consistent: 0 OK", "lock again: 0 OK",
	     "lock abandoned again: 131 ENOTRECOVERABLE", "trylock (owner died): 130 EOWNERDEAD",
	     "timedlock (owner died): 130 EOWNERDEAD");
}

Test(semantics, cond_timedwait_etimedout, .timeout = 30)
{
	SAME("sem_cond_timedwait", "timedwait: 110 ETIMEDOUT", "relock after timedwait (held): 35 EDEADLK",
	     "timedwait, deadline passed: 110 ETIMEDOUT", "timedwait, invalid deadline: 22 EINVAL",
	     "unlock: 0 OK");
}

Test(semantics, cancel_in_cond_wait_runs_cleanup_with_mutex, .timeout = 30)
{
	json_object *r;
	const char *out = tu_same_behaviour("sem_cancel_condwait", &r);
	static const char *const lines[] = { "cancel: 0 OK", "cleanup ran: yes", "cleanup's unlock: 0 OK", "join: 0 OK",
					     "canceled: yes", "trylock after cancel: 0 OK", NULL };
	expect_lines("sem_cancel_condwait", out, lines);
	cr_expect(!strstr(out, "not reached"), "the cancelled thread went on:\n%s", out);
	/* The cancelled waiter left the shim's waiter count: the 10 signals
	 * after it are all unwaited. */
	json_object *c = tu_cond(r, "cancel_cond");
	cr_assert(c, "no condvar named cancel_cond");
	TU_EQ(tu_int(c, "signals"), 10, "cancel_cond signals");
	TU_EQ(tu_int(c, "signals_unwaited"), 10, "cancel_cond signals_unwaited after the waiter was cancelled");
	TU_LE(1, tu_int(c, "waits"), "cancel_cond waits");
}

/* Every return value and errno of about 180 calls, success and failure,
 * the same under the shim (tests/progs/errno_survey.c); the first
 * sigaction of a claimed fatal signal returned SA_RESTORER in the old
 * flags before the fix in lifecycle.c. */
Test(semantics, every_return_value_and_errno_of_the_survey_is_the_programs, .timeout = 60)
{
	const char *out = tu_same_behaviour("errno_survey", NULL);
	cr_assert(tu_has_line(out, "pthread_tryjoin_np(t, NULL)                                            rc=16 errno=777"),
		  "%s", out);
}

/* The shim's own work after a wait (the wait's call stack: libunwind, /proc)
 * may reach cancellation points; a pending request must still be acted on
 * only where the program acts on it. */
Test(semantics, a_pending_cancel_takes_effect_only_at_the_programs_cancellation_point, .timeout = 30)
{
	const char *out = tu_same_behaviour("sem_cancel_pending", NULL);
	static const char *const lines[] = { "cancel: 0 OK", "join: 0 OK", "canceled: yes", "victim's lock: 0 OK",
					     "victim's unlock: 0 OK", "victim's barrier: 0 OK", "cleanup ran: yes",
					     "trylock after cancel: 0 OK", NULL };
	expect_lines("sem_cancel_pending", out, lines);
	cr_expect(!strstr(out, "not reached"), "the cancelled thread went on:\n%s", out);
}

Test(semantics, a_forked_child_can_still_be_cancelled, .timeout = 30)
{
	/* Two processes, two profiles: compared here rather than by tu_same_behaviour. */
	struct tu_proc native, shim;
	tu_run_native(&native, "sem_cancel_after_fork", NULL);
	tu_run_shim(&shim, tu_tmpdir(), "sem_cancel_after_fork", NULL);
	tu_assert_exit(&native, 0, "sem_cancel_after_fork natively");
	tu_assert_exit(&shim, 0, "sem_cancel_after_fork under the shim");
	cr_assert_str_eq(shim.out, native.out, "stdout differs under the shim");
	static const char *const lines[] = { "child cancels itself: 0 OK", "child's cleanup ran", "child: exit 0", NULL };
	expect_lines("sem_cancel_after_fork", native.out, lines);
	cr_expect(!strstr(native.out, "not reached"), "the child went on after its cancellation point:\n%s", native.out);
}

Test(semantics, clocklock_and_clockwait, .timeout = 30)
{
	SAME("sem_clock", "clocklock free (monotonic): 0 OK", "clocklock free (realtime): 0 OK",
	     "clocklock held (monotonic): 110 ETIMEDOUT", "clocklock held (realtime): 110 ETIMEDOUT",
	     "clocklock held (bad clock): 22 EINVAL", "clockwait (monotonic): 110 ETIMEDOUT",
	     "clockwait (realtime): 110 ETIMEDOUT", "clockwait (bad clock): 22 EINVAL");
}

Test(semantics, tryjoin_ebusy_timedjoin_etimedout, .timeout = 30)
{
	SAME("sem_join", "tryjoin running: 16 EBUSY", "timedjoin running: 110 ETIMEDOUT",
	     "timedjoin finishing: 0 OK", "tryjoin finished: 0 OK", "returned 42");
}

Test(semantics, unlock_unowned_eperm, .timeout = 30)
{
	SAME("sem_unlock_unowned", "unlock free errorcheck: 1 EPERM", "unlock free recursive: 1 EPERM",
	     "unlock errorcheck held by other: 1 EPERM", "unlock recursive held by other: 1 EPERM",
	     "unlock own: 0 OK");
}

Test(semantics, errno_preserved, .timeout = 30)
{
	const char *out = tu_same_behaviour("sem_errno", NULL);
	/* every line says "errno kept", except the count of changes, which is 0 */
	for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
		size_t n = strcspn(l, "\n");
		bool kept = n >= 10 && memcmp(l + n - 10, "errno kept", 10) == 0;
		bool none = strncmp(l, "64 new mutexes: errno changed 0 times", n) == 0;
		cr_expect(kept || none, "errno changed: %.*s", (int)n, l);
	}
	static const char *const lines[] = { "first lock of static mutex: rc 0 OK, errno kept",
		"timedwait (times out): rc 110 ETIMEDOUT, errno kept", "64 new mutexes: errno changed 0 times",
		"thread: first lock: rc 0 OK, errno kept", "create: rc 0 OK, errno kept",
		"annotations: errno kept", NULL };
	expect_lines("sem_errno", out, lines);
}
