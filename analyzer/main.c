/* main.c — the convoy command: dispatch to subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convoy/profile.h"
#include "diff.h"
#include "export.h"
#include "report.h"
#include "scale.h"
#include "util.h"
#include "view.h"

#define CONVOY_VERSION "0.1.0"

int cmd_run(int argc, char **argv);

static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "run a command under convoy and print its report" },
	{ "report", cmd_report, "print the report of a profile (text or --json)" },
	{ "scale", cmd_scale, "run a command at several thread counts and explain the curve" },
	{ "diff", cmd_diff, "compare two profiles or two sweeps, biggest change first" },
	{ "view", cmd_view, "write a profile's or a sweep's report as a web page (--open: show it)" },
	{ "export", cmd_export, "write a profile for other tools (--folded: flame-graph stacks)" },
};

static void usage(FILE *f)
{
	fputs("usage: convoy COMMAND [OPTIONS] ...\n"
	      "\n"
	      "convoy explains why adding threads made a program slower: which locks\n"
	      "and waits the threads lost their time to, with the numbers.\n"
	      "\n"
	      "commands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "examples:\n"
	      "  convoy run -- ./myprog --threads 4\n"
	      "  LD_PRELOAD=build/libconvoy.so ./myprog && convoy report convoy-myprog-*.convoy\n"
	      "\n"
	      "'convoy COMMAND --help' describes each command; man convoy has the rest.\n", f);
}

/* The end of a multibyte character cut short by the end of the output is
 * written (as U+FFFD) when the stream closes. */
static void close_stdout(void)
{
	fclose(stdout);
}

int main(int argc, char **argv)
{
	/* Names in profiles come from the programs profiled: nothing printed may
	 * carry their terminal escapes or invalid UTF-8 (util.h). */
	FILE *safe = cv_safe_stream(STDOUT_FILENO);
	if (safe) {
		stdout = safe;
		atexit(close_stdout);
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("convoy %s (profile format %u)\n", CONVOY_VERSION, CV_PROFILE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (cmd[0] == '-')
		cv_error("unknown option '%s': options go after the command (try 'convoy --help')", cmd);
	else
		cv_error("unknown command '%s' (try 'convoy --help')", cmd);
	return 2;
}
