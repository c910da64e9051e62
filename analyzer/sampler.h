/* sampler.h — CPU-time and context-switch sampling of a command, from the
 * launcher (docs/samples-format.md).
 *
 * The launcher opens perf_event_open events on the forked child before it
 * execs (one set per CPU, filtered to the child's pid, inherited by every
 * thread and process it starts, enabled by the exec), drains their ring
 * buffers from a thread of its own, and writes one samples file per process
 * beside the profiles: convoy-<pid>.samples, each sample's call chain
 * unwound from call-frame information where it can be (unwind.h). With them, the PMU's memory
 * samples where the CPU has them, and the counts of hardware write
 * watchpoints on the words the samples point at (watch.h). The program gets
 * no signal, no thread and no file descriptor of ours. */
#ifndef CONVOY_SAMPLER_H
#define CONVOY_SAMPLER_H

#include <stddef.h>
#include <sys/types.h>

#define SAMPLER_DEFAULT_HZ 1000

struct sampler;

/* Records of every context switch (when each thread left its CPU and got
 * it back: how long it was off it): none, as long as the program switches
 * seldom enough for them to cost it little (sampler.c, records_check), or
 * all of them. */
enum sampler_records { SAMPLER_RECORDS_OFF, SAMPLER_RECORDS_BUDGET, SAMPLER_RECORDS_ALL };

/* The bytes of user stack each CPU and switch sample copies for the
 * launcher to unwind from call-frame information (unwind.h): the default,
 * and the most CONVOY_SAMPLE_STACK may ask (a sample is one ring record of
 * at most 64 KiB, and the ring holds 512 KiB). */
#define SAMPLER_DEFAULT_STACK 4096
#define SAMPLER_MAX_STACK 32768

/* Opens the events on pid (a child stopped before its exec), copying
 * stack_bytes of user stack per sample (0: none, the kernel's
 * frame-pointer chains as they are). NULL when perf_event_open refused
 * them, with the reason in why. */
struct sampler *sampler__open(pid_t pid, unsigned hz, enum sampler_records records, unsigned stack_bytes,
			      char *why, size_t size);
/* Starts draining into dir. Returns 0, or -1 with the reason in why. */
int sampler__start(struct sampler *s, const char *dir, char *why, size_t size);
/* After the command ended: drains what is left, writes each file's last
 * line, closes everything. */
void sampler__stop(struct sampler *s);

#endif
