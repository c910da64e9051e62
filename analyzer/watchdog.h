/* watchdog.h — convoy run and scale notice a command that hung: a process
 * whose every thread sleeps in a futex wait with no deadline, using no CPU,
 * at two looks a period apart (CONVOY_WATCHDOG seconds, default 10; 0: off).
 * It lives in the launcher and reads /proc: the program runs as it would
 * without it. At a hang the launcher stops the process, or has the shim
 * write a snapshot profile and lets it go on (CONVOY_ON_HANG, --on-hang). */
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

/* What the launcher does with a hung process. */
enum watchdog_action {
	WATCHDOG_STOP,       /* the stop signal: the shim writes the profile, the process dies of it */
	WATCHDOG_CONTINUE,   /* the snapshot signal: the shim writes a snapshot, the process goes on */
};

struct watchdog_config {
	double period_s;     /* CONVOY_WATCHDOG; 0: off */
	enum watchdog_action on_hang;
};

/* CONVOY_WATCHDOG (unset: the default period) and the action: on_hang_option
 * (--on-hang's text) when given, else CONVOY_ON_HANG, else stop; "stop" or
 * "continue". cmd ("run", "scale") names the command in an error. Returns 0,
 * or -1 after one error line. */
int watchdog__config(struct watchdog_config *c, const char *cmd, const char *on_hang_option);

/* Asks the shim in pid for a snapshot profile (sigqueue of sig with
 * CV_SNAPSHOT_MAGIC), but only when pid catches sig (its SigCgt: with the
 * shim absent or inert it would die of it) and some thread of it does not
 * block it (else it would stay pending, for the program to see). Returns
 * whether the request was sent. */
int watchdog__snapshot(pid_t pid, int sig);

void watchdog__start(struct watchdog *w, pid_t root, double period_s, double now_ns);
/* When a period has passed, looks again: the pid of a process that was stuck
 * at this look and the last one, else 0. */
pid_t watchdog__check(struct watchdog *w, double now_ns);

#endif
