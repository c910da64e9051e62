/* main.c — fileserver: seed 004's static HTTP/1.1 file server.
 *
 * Start-up (listening sockets, the connection table, the scheduler's
 * threads), then the main thread waits for SIGINT/SIGTERM (blocked in every
 * thread, taken with sigtimedwait), sweeps timed-out connections between
 * waits, and ends the run when asked: a signal, --exit-after-requests, or the
 * end of the --load generator. Shutdown stops the threads, closes every
 * connection and prints the measurements.
 */
#include "fileserver.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void usage(FILE *out)
{
	fprintf(out,
"usage: fileserver --root DIR [--port PORT] [--workers N] [--scheduler S] [options]\n"
"       fileserver --client --port PORT [--connections C] [--requests N] [--path P]\n"
"\n"
"Serves the regular files beneath DIR over HTTP/1.1 (GET, HEAD, keep-alive).\n"
"The first line of stdout is the port it listens on (useful with --port 0).\n"
"\n"
"  --root DIR              document root (required)\n"
"  --host ADDR             address to bind (default 127.0.0.1; ::1 works too)\n"
"  --port PORT             0 picks a free port (default 8080)\n"
"  --workers N             worker threads, 1..%d (default 2)\n"
"  --scheduler S           rr | rs | lqs | as | reuseport (default rs)\n"
"  --max-connections N     open connections at once; more get 503 (default 1024)\n"
"  --header-timeout-ms N   a request head must arrive within this (default 10000)\n"
"  --keepalive-timeout-ms N  idle keep-alive connections close after (default 5000)\n"
"  --send-timeout-ms N     a client that reads nothing for this long is closed\n"
"                          (default 10000)\n"
"  --target-p99-us N       adaptive stealing's latency target (default 1000)\n"
"  --exit-after-requests N stop by itself after N responses\n"
"  --load C:N[:PATH]       run the closed-loop load generator as a child process\n"
"                          (C keep-alive connections, N requests of PATH, default\n"
"                          /index.html), stop when it is done; for `convoy scale`\n"
"  --stats-json FILE       also write the measurements as JSON (\"-\": stdout)\n"
"  -q, --quiet             no summary on stdout at shutdown\n"
"\n"
"schedulers:\n", FS_MAX_WORKERS);
#define FS__SCHED_HELP(name, text, what) fprintf(out, "  %-10s %s\n", text, what);
	FS_SCHED_MAP(FS__SCHED_HELP)
#undef FS__SCHED_HELP
	fprintf(out,
"\nexamples:\n"
"  fileserver --root www --port 0 --workers 4 --scheduler rs\n"
"  convoy scale --threads 1,2,4 -- fileserver --root www --port 0 --scheduler rr \\\n"
"      --workers {threads} --load 32:20000:/index.html\n");
}

static int bad(const char *opt, const char *value, const char *why)
{
	fprintf(stderr, "fileserver: %s: bad value '%s' (%s)\n", opt, value, why);
	return -1;
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
                     uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return bad(opt, s, "not a number");
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad(opt, s, "not a number");
	if (v < min || v > max) {
		char why[96];
		snprintf(why, sizeof why, "must be %llu..%llu", (unsigned long long)min,
		         (unsigned long long)max);
		return bad(opt, s, why);
	}
	*out = v;
	return 0;
}

static int parse_uint(const char *opt, const char *s, unsigned min, unsigned max,
                      unsigned *out)
{
	uint64_t v;
	if (parse_u64(opt, s, min, max, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_load(const char *s, struct fs_config *cfg)
{
	char buf[256];
	if (strlen(s) >= sizeof buf)
		return bad("--load", s, "too long");
	strcpy(buf, s);
	char *n = strchr(buf, ':');
	if (!n)
		return bad("--load", s, "expected CONNECTIONS:REQUESTS[:PATH]");
	*n++ = '\0';
	char *path = strchr(n, ':');
	if (path)
		*path++ = '\0';
	if (parse_uint("--load connections", buf, 1, 4096, &cfg->load_conns) ||
	    parse_u64("--load requests", n, 1, UINT64_MAX / 2, &cfg->load_requests))
		return -1;
	if (path && path[0] != '/')
		return bad("--load", s, "the path must start with '/'");
	static char load_path[sizeof buf];
	strcpy(load_path, path ? path : "/index.html");
	cfg->load_path = load_path;
	return 0;
}

static int parse_args(int argc, char **argv, struct fs_config *cfg)
{
	enum { O_ROOT = 256, O_HOST, O_PORT, O_WORKERS, O_SCHED, O_MAXC, O_HTO, O_KTO,
	       O_STO, O_P99, O_EXIT, O_LOAD, O_JSON };
	static const struct option opts[] = {
		{ "root", required_argument, NULL, O_ROOT },
		{ "host", required_argument, NULL, O_HOST },
		{ "port", required_argument, NULL, O_PORT },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ "scheduler", required_argument, NULL, O_SCHED },
		{ "max-connections", required_argument, NULL, O_MAXC },
		{ "header-timeout-ms", required_argument, NULL, O_HTO },
		{ "keepalive-timeout-ms", required_argument, NULL, O_KTO },
		{ "send-timeout-ms", required_argument, NULL, O_STO },
		{ "target-p99-us", required_argument, NULL, O_P99 },
		{ "exit-after-requests", required_argument, NULL, O_EXIT },
		{ "load", required_argument, NULL, O_LOAD },
		{ "stats-json", required_argument, NULL, O_JSON },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t p99_us = 1000;
	int o;
	while ((o = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		int err = 0;
		switch (o) {
		case O_ROOT: cfg->root = optarg; break;
		case O_HOST: cfg->host = optarg; break;
		case O_PORT: err = parse_uint("--port", optarg, 0, 65535, &cfg->port); break;
		case O_WORKERS:
			err = parse_uint("--workers", optarg, 1, FS_MAX_WORKERS, &cfg->workers);
			break;
		case O_SCHED:
			if (fs_sched_parse(optarg, &cfg->sched))
				err = bad("--scheduler", optarg, "rr, rs, lqs, as or reuseport");
			break;
		case O_MAXC: err = parse_uint("--max-connections", optarg, 1, 65536, &cfg->max_conns); break;
		case O_HTO: err = parse_uint("--header-timeout-ms", optarg, 1, 3600000, &cfg->header_timeout_ms); break;
		case O_KTO: err = parse_uint("--keepalive-timeout-ms", optarg, 1, 3600000, &cfg->keepalive_timeout_ms); break;
		case O_STO: err = parse_uint("--send-timeout-ms", optarg, 1, 3600000, &cfg->send_timeout_ms); break;
		case O_P99: err = parse_u64("--target-p99-us", optarg, 1, 60000000, &p99_us); break;
		case O_EXIT: err = parse_u64("--exit-after-requests", optarg, 1, UINT64_MAX / 2, &cfg->exit_after_requests); break;
		case O_LOAD: err = parse_load(optarg, cfg); break;
		case O_JSON: cfg->stats_json = optarg; break;
		case 'q': cfg->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
		if (err)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "fileserver: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!cfg->root) {
		fprintf(stderr, "fileserver: --root DIR is required (--help for usage)\n");
		return -1;
	}
	cfg->target_p99_ns = p99_us * 1000;
	return 0;
}

/* A non-blocking listening socket on host:port (SO_REUSEPORT if asked). */
static int listen_on(const char *host, unsigned port, bool reuseport, int *out)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai;
	char service[8];
	snprintf(service, sizeof service, "%u", port);
	int gai = getaddrinfo(host, service, &hints, &ai);
	if (gai) {
		fprintf(stderr, "fileserver: --host %s: %s (a numeric address is expected)\n",
		        host, gai_strerror(gai));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
	    (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024)) {
		fprintf(stderr, "fileserver: listening on %s port %u: %s\n", host, port,
		        strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	*out = fd;
	return 0;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                                      : ((struct sockaddr_in *)&ss)->sin_port);
}

static int open_listeners(struct fs_server *s)
{
	if (s->cfg.sched != FS_SCHED_REUSEPORT) {
		if (listen_on(s->cfg.host, s->cfg.port, false, &s->listen_fd))
			return -1;
		s->port = bound_port(s->listen_fd);
		return 0;
	}
	/* The first socket picks the port (maybe 0 -> a free one); the others
	 * join it. */
	unsigned port = s->cfg.port;
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		if (listen_on(s->cfg.host, port, true, &s->workers[i].listen_fd))
			return -1;
		if (i == 0)
			port = s->port = bound_port(s->workers[0].listen_fd);
	}
	return 0;
}

/* Starts the load generator: this program's --client mode, with the
 * profiler's variables (LD_PRELOAD, CONVOY_*) removed from its environment
 * so a profile of the server is a profile of the server. posix_spawn, not
 * fork: no fork handlers run in the server. */
static pid_t start_load(struct fs_server *s)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 1, sizeof *env);
	if (!env)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "CONVOY_", 7) != 0)
			env[k++] = environ[i];
	char port[16], conns[16], reqs[32];
	snprintf(port, sizeof port, "%u", s->port);
	snprintf(conns, sizeof conns, "%u", s->cfg.load_conns);
	snprintf(reqs, sizeof reqs, "%llu", (unsigned long long)s->cfg.load_requests);
	char *argv[] = { "fileserver", "--client", "--host", (char *)s->cfg.host,
	                 "--port", port, "--connections", conns, "--requests", reqs,
	                 "--path", (char *)s->cfg.load_path, NULL };
	/* The child starts with no signal blocked and SIGPIPE back to its
	 * default (exec keeps both from us otherwise). */
	posix_spawnattr_t attr;
	sigset_t none, pipe;
	sigemptyset(&none);
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &pipe);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	int err = posix_spawn(&pid, "/proc/self/exe", NULL, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	free(env);
	if (err) {
		fprintf(stderr, "fileserver: starting the load generator: %s\n", strerror(err));
		return -1;
	}
	return pid;
}

static uint64_t responses(struct fs_server *s)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < s->cfg.workers; i++)
		n += atomic_load_explicit(&s->workers[i].requests, memory_order_relaxed);
	return n;
}

/* The main thread's loop: returns the exit status. */
static int wait_for_end(struct fs_server *s, const sigset_t *set, pid_t load)
{
	/* Short waits only when a request count can end the run. */
	struct timespec tick = { 0, s->cfg.exit_after_requests ? 2000000 : 100000000 };
	uint64_t last_sweep = fs_now_ns();
	for (;;) {
		int sig = sigtimedwait(set, NULL, &tick);
		if (sig == SIGINT || sig == SIGTERM)
			return 0;
		if (sig == SIGCHLD && load > 0) {
			int status;
			if (waitpid(load, &status, WNOHANG) == load) {
				if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
					return 0;
				fprintf(stderr, "fileserver: the load generator failed\n");
				return 1;
			}
		}
		if (s->cfg.exit_after_requests && responses(s) >= s->cfg.exit_after_requests)
			return 0;
		uint64_t now = fs_now_ns();
		if (now - last_sweep >= 100000000) {
			fs_conns_sweep(s, now);
			last_sweep = now;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--client") == 0)
		return fs_load_main(argc - 1, argv + 1);

	struct fs_server s = {
		.cfg = {
			.host = "127.0.0.1", .port = 8080, .workers = 2,
			.sched = FS_SCHED_RS, .max_conns = 1024,
			.header_timeout_ms = 10000, .keepalive_timeout_ms = 5000,
			.send_timeout_ms = 10000,
		},
		.listen_fd = -1, .root_fd = -1, .stop_fd = -1, .steal_fd = -1,
		.accept_epfd = -1,
	};
	if (parse_args(argc, argv, &s.cfg))
		return 2;
	int status = 1;
	s.root_fd = open(s.cfg.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s.root_fd < 0) {
		fprintf(stderr, "fileserver: --root %s: %s\n", s.cfg.root, strerror(errno));
		return 1;
	}
	s.workers = aligned_alloc(FS_CACHE_LINE, s.cfg.workers * sizeof *s.workers);
	if (!s.workers) {
		fprintf(stderr, "fileserver: out of memory\n");
		return 1;
	}
	memset(s.workers, 0, s.cfg.workers * sizeof *s.workers);
	for (unsigned i = 0; i < s.cfg.workers; i++)
		s.workers[i].epfd = s.workers[i].listen_fd = -1;

	/* Signals: SIGINT/SIGTERM/SIGCHLD are taken by the main thread only
	 * (blocked before any thread starts, so every thread inherits the
	 * mask); a peer that closes mid-response must not kill us. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	int err;
	if (open_listeners(&s))
		goto out;
	if ((err = fs_conns_init(&s)) != 0) {
		fprintf(stderr, "fileserver: connection table: %s\n", strerror(-err));
		goto out;
	}
	s.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s.steal_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s.stop_fd < 0 || s.steal_fd < 0) {
		fprintf(stderr, "fileserver: eventfd: %s\n", strerror(errno));
		goto out;
	}
	printf("%u\n", s.port);
	fflush(stdout);
	s.started_ns = fs_now_ns();
	if ((err = fs_sched_start(&s)) != 0) {
		fprintf(stderr, "fileserver: starting the workers: %s\n", strerror(-err));
		fs_sched_stop(&s);
		goto out;
	}
	pid_t load = 0;
	if (s.cfg.load_conns && (load = start_load(&s)) < 0)
		status = 1;
	else
		status = wait_for_end(&s, &set, load);
	fs_sched_stop(&s);
	s.stopped_ns = fs_now_ns();
	if (load > 0 && waitpid(load, NULL, WNOHANG) == 0) {
		kill(load, SIGTERM);
		waitpid(load, NULL, 0);
	}
	if (!s.cfg.quiet)
		fs_stats_print(&s, stdout);
	if (s.cfg.stats_json && fs_stats_write_json(&s, s.cfg.stats_json) != 0) {
		fprintf(stderr, "fileserver: --stats-json %s: %s\n", s.cfg.stats_json,
		        strerror(errno));
		status = 1;
	}
out:
	fs_sched_destroy(&s);
	if (s.conns)
		fs_conns_destroy(&s);
	for (unsigned i = 0; i < s.cfg.workers; i++)
		if (s.workers[i].listen_fd >= 0)
			close(s.workers[i].listen_fd);
	if (s.listen_fd >= 0)
		close(s.listen_fd);
	if (s.stop_fd >= 0)
		close(s.stop_fd);
	if (s.steal_fd >= 0)
		close(s.steal_fd);
	close(s.root_fd);
	free(s.workers);
	return status;
}
