/* watch.h — hardware write watchpoints on the words the CPU samples point
 * at, armed by the launcher on the command's threads (docs/samples-format.md,
 * "watch").
 *
 * The sampler hands each user-code CPU sample to the watcher, which decodes
 * its instruction in the live process (cachelines.h's decoder; the code read
 * with process_vm_readv, its function found with libdwfl from
 * /proc/PID/maps) and ranks the words the samples used. Now and then it
 * points the watchpoints (PERF_TYPE_BREAKPOINT write events of 1 to 8 bytes,
 * opened on the child before its exec and inherited by all it starts: the
 * descriptors are the launcher's) at a few of the hottest words for some
 * milliseconds; each write is a sample in the CPU's ring, counted per thread
 * and word. A thread has four debug registers, hence a few words per window,
 * rotated over the candidates. */
#ifndef CONVOY_WATCH_H
#define CONVOY_WATCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define WATCH_WORDS_PER_WINDOW 4      /* x86-64 debug registers per thread */

struct watcher;

/* Where a process's records go (the sampler's samples file of pid); NULL:
 * nowhere. */
typedef FILE *(*watch_file_fn)(void *ctx, pid_t pid);
/* Drains the rings now (the writes of a window just closed). */
typedef void (*watch_drain_fn)(void *ctx);

/* Opens the watchpoints on pid (the child, stopped before its exec), their
 * samples into ring_fd[cpu] (-1: no ring on that CPU), for ncpus CPUs. NULL
 * with the reason in why. */
struct watcher *watcher__open(pid_t pid, const int *ring_fd, int ncpus, watch_file_fn file, watch_drain_fn drain,
			      void *ctx, char *why, size_t size);
/* Whether a sample of this id is a watchpoint's; then its thread and the
 * address written go to watcher__hit. */
int watcher__owns(const struct watcher *w, uint64_t id);
void watcher__hit(struct watcher *w, pid_t pid, pid_t tid, uint64_t addr);
/* A user-code CPU sample of process pid: its IP and user registers
 * (enum sample_reg order). */
void watcher__sample(struct watcher *w, pid_t pid, uint64_t ip, const uint64_t *regs);
/* Arms the next window or closes the current one when it is time (now:
 * CLOCK_MONOTONIC). Returns the milliseconds until it should be called
 * again. */
int watcher__tick(struct watcher *w, uint64_t now_ns);
/* Closes the window armed, if any, and frees everything. */
void watcher__close(struct watcher *w);

#endif
