/* watchdog.h — convoy run and scale notice a command that hung: a process
 * whose every thread sleeps in a futex wait with no deadline, using no CPU,
 * at two looks a period apart (CONVOY_WATCHDOG seconds, default 10; 0: off).
 * It lives in the launcher and reads /proc: the program runs as it would
 * without it. */
#ifndef CONVOY_WATCHDOG_H
#define CONVOY_WATCHDOG_H

#include <stddef.h>
#include <sys/types.h>

#define WATCHDOG_MAX_LOOKS 64

struct watchdog_look {
	pid_t pid;
	unsigned long long ticks;   /* its CPU time then */
};

struct watchdog {
	pid_t root;                 /* the command; its descendants are watched too */
	double period_ns, next_ns;  /* period 0: off */
	struct watchdog_look looks[WATCHDOG_MAX_LOOKS];   /* the processes stuck at the last look */
	size_t nlooks;
};

/* CONVOY_WATCHDOG into *period_s (unset: the default). Returns 0, or -1
 * after one error line. */
int watchdog__period(double *period_s);

void watchdog__start(struct watchdog *w, pid_t root, double period_s, double now_ns);
/* When a period has passed, looks again: the pid of a process that was stuck
 * at this look and the last one, else 0. */
pid_t watchdog__check(struct watchdog *w, double now_ns);

#endif
