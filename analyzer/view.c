/* view.c — `convoy view`: write the page of a profile or a sweep, print its
 * path, and open it in a browser only when asked (--open). */
#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "html.h"
#include "util.h"
#include "view.h"

extern char **environ;

static void view_usage(FILE *f)
{
	fputs("usage: convoy view [-o FILE] [--open] PROFILE|SWEEP_DIR\n"
	      "\n"
	      "Writes the report of a profile, or of a convoy scale sweep, as one\n"
	      "self-contained web page (no network needed to view it) and prints its path.\n"
	      "\n"
	      "  -o FILE      write the page to FILE (default: SWEEP_DIR/report.html, or\n"
	      "               PROFILE.html beside the profile)\n"
	      "  --open       also open it with xdg-open\n"
	      "\n"
	      "examples:\n"
	      "  convoy view build/demo/global_queue\n"
	      "  convoy view --open convoy-myprog-1234.convoy\n", f);
}

static int open_in_browser(const char *path)
{
	char *argv[] = { "xdg-open", (char *)path, NULL };
	pid_t pid;
	int err = posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ), status;
	if (err) {
		cv_error("view: cannot run xdg-open to open %s: %s", path, strerror(err));
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cv_error("view: xdg-open could not open %s", path);
		return -1;
	}
	return 0;
}

int cmd_view(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "open", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *output = NULL;
	int open_it = 0, c;
	optind = 1;
	while ((c = cv_getopt("view", argc, argv, "o:h", longopts)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'O': open_it = 1; break;
		case 'h': view_usage(stdout); return 0;
		default:
			return 2;   /* cv_getopt said why */
		}
	}
	if (optind != argc - 1) {
		cv_error("view: expected one PROFILE or SWEEP_DIR, got %d (try 'convoy view --help')", argc - optind);
		return 2;
	}
	const char *input = argv[optind];
	char path[4200];
	struct stat st;
	if (output)
		snprintf(path, sizeof(path), "%s", output);
	else if (stat(input, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "%s/report.html", input);
	else
		snprintf(path, sizeof(path), "%s.html", input);
	json_object *page = html__path_page(input);
	if (!page)
		return 1;
	int rc = html__write(path, page);
	json_object_put(page);
	if (rc)
		return 1;
	printf("%s\n", path);
	if (fflush(stdout) != 0) {
		cv_error("view: cannot write to standard output: %s", strerror(errno));
		return 1;
	}
	return open_it && open_in_browser(path) ? 1 : 0;
}
