/* test_cli — the command line: bad values get one clear line and exit 2;
 * the default address is loopback only. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "client.h"

/* Runs the server with a shell command line; returns its exit status and
 * the first line of stderr. */
static int run(const char *args, char *err, size_t n)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null </dev/null", FILESERVER_BIN, args);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	if (!fgets(err, (int)n, p))
		err[0] = '\0';
	char rest[256];
	while (fgets(rest, sizeof rest, p))
		;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(fileserver_cli, bad_values_are_named, .timeout = 30)
{
	char err[512];
	cr_assert_eq(run("--root /tmp --workers 0", err, sizeof err), 2);
	cr_assert(strstr(err, "fileserver: --workers: bad value '0'"), "%s", err);
	cr_assert_eq(run("--root /tmp --scheduler fifo", err, sizeof err), 2);
	cr_assert(strstr(err, "--scheduler: bad value 'fifo'"), "%s", err);
	cr_assert_eq(run("--root /tmp --port 70000", err, sizeof err), 2);
	cr_assert(strstr(err, "--port: bad value '70000'"), "%s", err);
	cr_assert_eq(run("--root /tmp --load 8", err, sizeof err), 2);
	cr_assert(strstr(err, "--load: bad value '8'"), "%s", err);
	cr_assert_eq(run("--port 0", err, sizeof err), 2);
	cr_assert(strstr(err, "--root DIR is required"), "%s", err);
	cr_assert_eq(run("--root /nonexistent/dir --port 0", err, sizeof err), 1);
	cr_assert(strstr(err, "fileserver: --root /nonexistent/dir:"), "%s", err);
	cr_assert_eq(run("--root /tmp --port 0 --host example.com", err, sizeof err), 1);
	cr_assert(strstr(err, "fileserver: --host example.com"), "%s", err);
}

Test(fileserver_cli, it_listens_on_loopback_by_default, .timeout = 30)
{
	char root[256];
	root_make(root, sizeof root);
	struct server s;
	server_start(&s, root, NULL);
	/* /proc/net/tcp: local address 0100007F:PORT, state 0A (LISTEN). */
	FILE *f = fopen("/proc/net/tcp", "r");
	cr_assert(f);
	char line[512], want[32];
	snprintf(want, sizeof want, "%04X", s.port);
	bool found = false, loopback = true;
	while (fgets(line, sizeof line, f)) {
		char local[64], remote[64], state[8];
		if (sscanf(line, "%*s %63s %63s %7s", local, remote, state) != 3)
			continue;
		const char *port = strchr(local, ':');
		if (port && strcmp(port + 1, want) == 0 && strcmp(state, "0A") == 0) {
			found = true;
			loopback &= strncmp(local, "0100007F:", 9) == 0;
		}
	}
	fclose(f);
	cr_assert(found, "no listening socket on port %u", s.port);
	cr_assert(loopback, "listening beyond 127.0.0.1");
	cr_assert_eq(server_stop(&s, NULL), 0);
	root_remove(root);
}

Test(fileserver_cli, exit_after_requests_and_load_end_the_run_by_themselves, .timeout = 120)
{
	char root[256];
	root_make(root, sizeof root);
	struct server s;
	server_start(&s, root, "--scheduler", "rr", "--workers", "2", "--load", "4:2000", NULL);
	char *summary;
	cr_assert_eq(server_wait(&s, &summary), 0);
	cr_assert(strstr(summary, "status: 200 x2000;"), "%s", summary);
	free(summary);
	server_start(&s, root, "--exit-after-requests", "50", NULL);
	for (int i = 0; i < 50; i++)
		cr_assert_eq(request_status(s.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n"), 200);
	cr_assert_eq(server_wait(&s, &summary), 0);
	cr_assert(strstr(summary, "status: 200 x50;"), "%s", summary);
	free(summary);
	root_remove(root);
}
