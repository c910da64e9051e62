/* shimtrace.h — for the test programs that look into libconvoy.so from
 * outside it: its mapping in a traced child, a symbol of its .symtab
 * (hidden ones included: libelf), and the ptrace steps of a tracer that
 * starts a traced child, single-steps the shim and runs to a breakpoint
 * (signal_every_step.c, order_memo_signal.c, partner_back_home.c,
 * exit_on_carved_altstack.c; fastpath_writes.c reads the shim's symbols
 * only). Static functions: each program uses what it needs (link with
 * -lelf for shim_symbol). */
#ifndef CONVOY_TEST_SHIMTRACE_H
#define CONVOY_TEST_SHIMTRACE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <gelf.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>

/* libconvoy.so's executable mapping [*lo, *hi) in pid; when base is not
 * NULL, also its load address (the start of its mapping at file offset 0)
 * and, into so (len bytes), its path. */
static inline bool shim_mapping(pid_t pid, unsigned long *lo, unsigned long *hi, unsigned long *base, char *so,
				size_t len)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool code = false, start = !base;
	while (f && !(code && start) && fgets(line, sizeof line, f)) {
		unsigned long from, to, off;
		int name = 0;
		if (!strstr(line, "libconvoy.so") || sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &from, &to, &off, &name) != 3)
			continue;
		if (off == 0 && !start) {
			*base = from;
			snprintf(so, len, "%.*s", (int)strcspn(line + name, "\n"), line + name);
			start = true;
		}
		if (strstr(line, " r-xp ")) {
			*lo = from;
			*hi = to;
			code = true;
		}
	}
	if (f)
		fclose(f);
	return code && start;
}

/* A symbol of the .symtab of the ELF file at path (st_value: an offset
 * from its load address for a shared object). */
static inline bool shim_symbol(const char *path, const char *name, GElf_Sym *out)
{
	int fd = elf_version(EV_CURRENT) != EV_NONE ? open(path, O_RDONLY) : -1;
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	bool found = false;
	for (Elf_Scn *scn = NULL; e && !found && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			found = gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(n, name);
			if (found)
				*out = s;
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return found;
}

static inline long peek(pid_t pid, const volatile void *addr)
{
	return ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
}

/* Resumes pid (how: PTRACE_CONT or PTRACE_SINGLESTEP) with sig, and
 * waits until it stops with `until`, passing any other signal on (SIGCHLD
 * from a handler's fork). False when it ended. */
static inline bool resume_until(pid_t pid, enum __ptrace_request how, int sig, int until, int *status)
{
	for (;;) {
		if (ptrace(how, pid, NULL, (void *)(long)sig) != 0 || waitpid(pid, status, 0) < 0 ||
		    !WIFSTOPPED(*status))
			return false;
		if (WSTOPSIG(*status) == until)
			return true;
		sig = WSTOPSIG(*status);
	}
}

/* Whether a single step's stop at (pc, sp) is the next iteration of the
 * rep-prefixed instruction of the stop before (at from_pc, from_sp), not
 * another arrival: a breakpoint stops once at such an instruction, the
 * steps at each iteration. (No rep instruction is on the paths traced
 * today.) */
static inline bool same_step(unsigned long long from_pc, unsigned long long from_sp, unsigned long long pc,
			     unsigned long long sp)
{
	return pc == from_pc && sp == from_sp;
}

/* Resumes pid (how) with *sig and waits for its next stop: 1 at a
 * SIGTRAP (*sig 0: a trap is the tracer's), 2 at signal stop (none: 0), 0
 * at any other signal (in *sig: passed on at the next resume, SIGCHLD from
 * a handler's fork), -1 when it ended. */
static inline int resume_once(pid_t pid, enum __ptrace_request how, int *sig, int stop, int *status)
{
	if (ptrace(how, pid, NULL, (void *)(long)*sig) != 0 || waitpid(pid, status, 0) < 0 || !WIFSTOPPED(*status))
		return -1;
	*sig = WSTOPSIG(*status);
	if (stop && *sig == stop)
		return 2;
	if (*sig != SIGTRAP)
		return 0;
	*sig = 0;
	return 1;
}

/* Runs pid on until it is about to execute the instruction at pc: 1 there,
 * 2 when it stopped with signal stop first (none: 0), -1 when it ended;
 * any other signal is passed on. Under a software breakpoint: an int3
 * written over the instruction's first byte for the run (the text page
 * becomes pid's own copy), taken out again before this returns, so that a
 * child pid forks later never meets it. Not a debug register: some
 * hypervisors take them and never trap (a KVM guest under PVM: these
 * tests then stepped instead, 44 s of make test beside a CPU hog), and
 * convoy run's watchpoints may hold them all. From pc itself (a run that
 * stopped there before) it steps off first. */
static inline int run_on_to(pid_t pid, unsigned long pc, int stop, int *status)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
		return -1;
	for (int sig = 0, r; regs.rip == pc;)
		if ((r = resume_once(pid, PTRACE_SINGLESTEP, &sig, stop, status)) < 0 || r == 2 ||
		    (r == 1 && ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0))
			return r == 2 ? 2 : -1;
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)pc, NULL);
	if (errno || ptrace(PTRACE_POKETEXT, pid, (void *)pc, (void *)((word & ~0xffL) | 0xcc)) != 0)
		return -1;
	int at = -1;
	for (int sig = 0, r;;) {
		if ((r = resume_once(pid, PTRACE_CONT, &sig, stop, status)) < 0)
			return -1;   /* it ended: nothing to take out */
		if (r == 2) {
			at = 2;
			break;
		}
		if (r == 0)
			continue;
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			break;
		if (regs.rip == pc + 1) {   /* the int3's trap: back to the instruction */
			regs.rip = pc;
			at = ptrace(PTRACE_SETREGS, pid, NULL, &regs) == 0 ? 1 : -1;
			break;
		}
	}
	return ptrace(PTRACE_POKETEXT, pid, (void *)pc, (void *)word) == 0 ? at : -1;
}

/* Runs pid on until it executes the instruction at pc with its stack
 * pointer at sp (not a deeper call that runs the same instruction): 1
 * once there, -1 when it ended. */
static inline int run_to(pid_t pid, unsigned long pc, unsigned long sp, int *status)
{
	struct user_regs_struct regs;
	int at;
	while ((at = run_on_to(pid, pc, 0, status)) == 1) {
		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) != 0)
			return -1;
		if (regs.rsp == sp)
			break;
	}
	return at;
}

/* A child that asks to be traced, stops itself, then runs body and exits
 * with what it returns; in the parent, its pid once it has stopped, 0 when
 * it could not be traced (ptrace refused: it exits 77), -1 on an error.
 * Tracer and child share the CPU the tracer is on: each step or stop hands
 * the CPU from one to the other, and across two CPUs every hand-off woke
 * the other one (on a KVM guest, an interrupt through the hypervisor).
 * signal_every_step forking at no signal took 5.9 s of wall and 4.0 of CPU
 * on two CPUs, 1.35 and 1.35 on one. The child then runs one thread at a
 * time (these programs join their helper threads before the tracer steps
 * them). */
static inline pid_t traced_child(int (*body)(void))
{
	cpu_set_t one;
	CPU_ZERO(&one);
	int cpu = sched_getcpu();
	if (cpu >= 0) {
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);   /* where it is refused, they only run slower */
	}
	pid_t pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(77);
		raise(SIGSTOP);
		int rc = body();
		fflush(stdout);
		_exit(rc);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFSTOPPED(status) ? pid : 0;
}

#endif
