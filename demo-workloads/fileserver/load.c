/* load.c — the closed-loop load generator behind --load (and --client).
 *
 * C threads, one keep-alive connection each, share N GET requests: each
 * sends one, reads the whole response (checking the status is 200 and the
 * body has its Content-Length), and sends the next. A fixed amount of work,
 * so the server's wall time measures its throughput: what `convoy scale`
 * needs, where wrk (which runs for a fixed duration) does not fit. The
 * generator runs as its own process, started by the server without the
 * profiler's environment.
 */
#include "fileserver.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct load {
	const char *host, *path;
	unsigned port, conns;
	uint64_t requests;
	_Atomic uint64_t next, done, failed;
};

static int connect_to(const char *host, unsigned port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	                          .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai;
	char service[8];
	snprintf(service, sizeof service, "%u", port);
	if (getaddrinfo(host, service, &hints, &ai))
		return -1;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Bounded: a server that stops answering fails the run, never hangs it. */
	struct timeval tv = { .tv_sec = 30 };
	if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
	                connect(fd, ai->ai_addr, ai->ai_addrlen))) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* One request on fd: 0 if a complete 200 came back; *reopen when the
 * server said it closes. */
static int one_request(int fd, const char *req, size_t req_len, bool *reopen)
{
	if (send(fd, req, req_len, MSG_NOSIGNAL) != (ssize_t)req_len)
		return -1;
	char buf[16384];
	size_t len = 0;
	char *end = NULL;
	while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
		if (len == sizeof buf)
			return -1;
		ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
	*end = '\0';
	if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0)
		return -1;
	const char *cl = strcasestr(buf, "\r\ncontent-length:");
	if (!cl)
		return -1;
	unsigned long long body = strtoull(cl + 17, NULL, 10);
	*reopen = strcasestr(buf, "\r\nconnection: close") != NULL;
	size_t have = len - (size_t)(end + 4 - buf);
	if (have > body)
		return -1;   /* more than one response: the server broke framing */
	body -= have;
	while (body > 0) {
		ssize_t n = recv(fd, buf, body < sizeof buf ? body : sizeof buf, 0);
		if (n <= 0)
			return -1;
		body -= (unsigned long long)n;
	}
	return 0;
}

static void *client(void *arg)
{
	struct load *l = arg;
	char req[1024];
	int req_len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n",
	                       l->path, l->host);
	int fd = -1;
	while (atomic_fetch_add(&l->next, 1) < l->requests) {
		bool reopen = false;
		if (fd < 0 && (fd = connect_to(l->host, l->port)) < 0) {
			atomic_fetch_add(&l->failed, 1);
			continue;
		}
		if (one_request(fd, req, (size_t)req_len, &reopen) != 0) {
			atomic_fetch_add(&l->failed, 1);
			reopen = true;
		} else {
			atomic_fetch_add(&l->done, 1);
		}
		if (reopen) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

int fs_load_main(int argc, char **argv)
{
	struct load l = { .host = "127.0.0.1", .path = "/index.html", .conns = 16,
	                  .requests = 10000 };
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'c' },
		{ "requests", required_argument, NULL, 'n' },
		{ "path", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int o;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = 0;
		if (o != 'H' && o != 'P' && o != '?') {
			v = strtoull(optarg, &end, 10);
			if (*end || !*optarg || v == 0 || v > (o == 'p' ? 65535ull : 1ull << 40)) {
				fprintf(stderr, "fileserver --client: bad value '%s'\n", optarg);
				return 2;
			}
		}
		switch (o) {
		case 'H': l.host = optarg; break;
		case 'P': l.path = optarg; break;
		case 'p': l.port = (unsigned)v; break;
		case 'c': l.conns = (unsigned)(v > 4096 ? 4096 : v); break;
		case 'n': l.requests = v; break;
		default: return 2;
		}
	}
	if (!l.port) {
		fprintf(stderr, "fileserver --client: --port is required\n");
		return 2;
	}
	pthread_t *t = calloc(l.conns, sizeof *t);
	if (!t)
		return 1;
	uint64_t t0 = fs_now_ns();
	unsigned started = 0;
	for (; started < l.conns; started++)
		if (pthread_create(&t[started], NULL, client, &l) != 0)
			break;
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	double secs = (double)(fs_now_ns() - t0) / 1e9;
	uint64_t done = atomic_load(&l.done), failed = atomic_load(&l.failed);
	fprintf(stderr, "load: %llu requests over %u connections in %.3f s (%.0f/s), %llu failed\n",
	        (unsigned long long)done, started, secs, secs > 0 ? (double)done / secs : 0,
	        (unsigned long long)failed);
	return failed || started == 0 ? 1 : 0;
}
