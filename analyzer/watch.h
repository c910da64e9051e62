/* watch.h — hardware write watchpoints on the words the CPU samples point
 * at, armed by the launcher on the command's threads (docs/samples-format.md,
 * "watch").
 *
 * The sampler hands each user-code CPU sample to the watcher, which decodes
 * its instruction in the live process (cachelines.h's decoder; the code read
 * with process_vm_readv, its function found with libdwfl from
 * /proc/PID/maps) and ranks the words the samples used. Now and then it arms
 * PERF_TYPE_BREAKPOINT write events (8 bytes) on a few of the hottest words
 * on every thread of the process, from the launcher (the descriptors are
 * ours; counting only: no signal, no ring), and some milliseconds later
 * reads how many writes each thread made to each word and closes them. A
 * thread has four debug registers, hence a few words per window, rotated
 * over the candidates. */
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

/* Checks that a write watchpoint can be opened on pid (the child, stopped
 * before its exec). NULL with the reason in why. */
struct watcher *watcher__open(pid_t pid, watch_file_fn file, void *ctx, char *why, size_t size);
/* A user-code CPU sample of process pid: its IP and user registers
 * (enum sample_reg order). */
void watcher__sample(struct watcher *w, pid_t pid, uint64_t ip, const uint64_t *regs);
/* Arms the next window or closes the current one when it is time (now:
 * CLOCK_MONOTONIC). Returns the milliseconds until it should be called
 * again. */
int watcher__tick(struct watcher *w, uint64_t now_ns);
/* Closes the window armed, if any, and frees everything. */
void watcher__close(struct watcher *w, uint64_t now_ns);

#endif
