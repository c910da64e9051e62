/* analysis.h — one profile taken through the pipeline once: loaded,
 * symbolized, modelled, its speedup stack computed and its findings ranked
 * (DESIGN.md, "Layers inside the analyzer"). Every command reads analyses;
 * renderers only read them. */
#ifndef CONVOY_ANALYSIS_H
#define CONVOY_ANALYSIS_H

#include <sys/types.h>
#include <time.h>

#include "findings.h"
#include "model.h"
#include "outcome.h"
#include "speedup.h"

struct profile;
struct syms;

struct analysis {
	struct profile *p;
	struct syms *syms;
	struct model m;
	struct speedup s;       /* computed by analysis__diagnose or by a sweep */
	struct findings f;      /* a single run's own; a sweep keeps its findings itself */
	struct run_outcome run; /* how the command ended, when convoy run/scale launched it */
	struct cpuprof *cpu;    /* the run's CPU samples (m.cpu), or NULL */
	struct analysis *hang;  /* the snapshot the shim wrote at a hang (m.hang), or NULL */
	int diagnosed;
};

/* Loads path and builds the model, with the CPU samples beside it when the
 * run was sampled (cpuprof.h), and the snapshot the same process wrote at a
 * hang (convoy-COMM-PID.hang, --on-hang auto or continue) when there is one. Symbols come from the modules the
 * profile names unless CONVOY_SYMBOLS=0 (reproducible output: golden tests
 * of recorded profiles). Returns 0, or -1 after one error line. */
int analysis__load(struct analysis *a, const char *path);

/* A single run on its own: the stack at as many threads as were busy, with
 * no reference run (all on-CPU time counts as useful), and its findings. */
void analysis__diagnose(struct analysis *a);

void analysis__free(struct analysis *a);

/* The profile to analyse among those the command tree rooted at pid wrote
 * into dir since the time since (a shell's, then its children's): the
 * process named comm (its comm or executable's name) when given, else the
 * one that did the most threaded work (its created threads' lifetimes plus
 * its main thread's CPU time); among processes that made no thread, one
 * that used a synchronisation object before one that used none. What is said on stderr when there was a
 * choice: the one chosen (FIND_SAY_CHOICE), and that it created no thread
 * (FIND_SAY_UNTHREADED). When no process wrote a profile, the hang
 * snapshot (.hang) chosen the same way, said on stderr with either. NULL
 * when none (caller frees). */
enum { FIND_SAY_CHOICE = 1, FIND_SAY_UNTHREADED = 2 };
char *analysis__find_profile(const char *dir, pid_t pid, time_t since, const char *comm, int say);

#endif
