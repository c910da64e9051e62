/* test_hostile — requests meant to hurt: floods, huge URIs, garbage, half
 * closes, slow and absent clients, too many connections. After each attack
 * the server must still answer a normal request and exit cleanly.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

static struct server srv;
static char root[256];

/* Runs after each test, passed or failed (the server is gone by then: it
 * exits with the test process at the latest). */
static void cleanup(void)
{
	root_remove(root);
}

TestSuite(fileserver_hostile, .fini = cleanup);

static void still_serving(void)
{
	cr_assert_eq(request_status(srv.port, GET("/index.html")), 200,
	             "the server stopped answering");
}

static void stop_ok(void)
{
	still_serving();
	cr_assert_eq(server_stop(&srv, NULL), 0, "the server did not exit cleanly");
}

/* Sends as much of buf as the server takes; a server that closes early (it
 * answered an error already) is fine. */
static void send_some(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

Test(fileserver_hostile, a_header_flood_gets_431_and_is_closed, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rs", NULL);
	/* One huge header, then many small ones. */
	size_t big = 64 * 1024;
	char *flood = malloc(big + 64);
	int n = sprintf(flood, "GET / HTTP/1.1\r\nHost: t\r\nX: ");
	memset(flood + n, 'a', big);
	int fd = connect_port(srv.port);
	send_some(fd, flood, (size_t)n + big);
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 431);
	response_free(&r);
	cr_assert(closed_within(fd, 20000));
	close(fd);

	char *many = malloc(200 * 16 + 64), *p = many;
	p += sprintf(p, "GET / HTTP/1.1\r\nHost: t\r\n");
	for (int i = 0; i < 200; i++)
		p += sprintf(p, "X-%d: y\r\n", i);
	p += sprintf(p, "\r\n");
	cr_assert_eq(request_status(srv.port, many), 431, "200 headers");
	free(many);
	free(flood);
	stop_ok();
}

Test(fileserver_hostile, a_very_long_uri_gets_414, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rr", NULL);
	size_t len = 100 * 1024;
	char *req = malloc(len + 64);
	memcpy(req, "GET /", 5);
	memset(req + 5, 'a', len);
	strcpy(req + 5 + len, " HTTP/1.1\r\nHost: t\r\n\r\n");
	int fd = connect_port(srv.port);
	send_some(fd, req, strlen(req));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 414);
	response_free(&r);
	close(fd);
	/* Just below the limit, a long name is an ordinary 404. */
	memset(req + 5, 'a', 4000);
	strcpy(req + 5 + 4000, " HTTP/1.1\r\nHost: t\r\n\r\n");
	cr_assert_eq(request_status(srv.port, req), 404);
	free(req);
	stop_ok();
}

Test(fileserver_hostile, pipelined_garbage_after_a_good_request, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "lqs", NULL);
	int fd = connect_port(srv.port);
	const char *raw = GET("/index.html") "\x01\x02\xff garbage \r\n\r\n" GET("/index.html");
	send_all(fd, raw, strlen(raw));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 200);
	response_free(&r);
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 400);
	response_free(&r);
	/* Nothing after the error: the stream is not trusted any more. */
	cr_assert(closed_within(fd, 20000));
	close(fd);
	/* Random binary noise, several rounds. */
	uint64_t x = 0x1234567;
	for (int round = 0; round < 20; round++) {
		char noise[2048];
		for (size_t i = 0; i < sizeof noise; i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			noise[i] = (char)x;
		}
		fd = connect_port(srv.port);
		send_some(fd, noise, sizeof noise);
		shutdown(fd, SHUT_WR);
		cr_assert(closed_within(fd, 20000), "round %d", round);
		close(fd);
	}
	stop_ok();
}

Test(fileserver_hostile, a_half_closed_client_still_gets_its_answer, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "as", NULL);
	int fd = connect_port(srv.port);
	const char *two = GET("/index.html") GET("/sub/page.txt");
	send_all(fd, two, strlen(two));
	shutdown(fd, SHUT_WR);
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_str_eq(r.body, "hello\n");
	response_free(&r);
	cr_assert(read_response(fd, &r, false));
	cr_assert_str_eq(r.body, "page\n");
	response_free(&r);
	cr_assert(closed_within(fd, 20000));
	close(fd);
	/* Half a request, then the half close: no answer, just a close. */
	fd = connect_port(srv.port);
	send_all(fd, "GET /index.html HTTP/1.1\r\nHo", 28);
	shutdown(fd, SHUT_WR);
	cr_assert(closed_within(fd, 20000));
	close(fd);
	/* Connect and close at once, many times. */
	for (int i = 0; i < 200; i++)
		close(connect_port(srv.port));
	stop_ok();
}

Test(fileserver_hostile, slowloris_is_timed_out, .timeout = 90)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rs", "--header-timeout-ms", "300",
	             "--keepalive-timeout-ms", "300", NULL);
	/* A byte at a time, never finishing: closed although it keeps sending
	 * (the header timeout runs from the first byte, not the last). */
	int fd = connect_port(srv.port);
	const char *part = "GET /index.html HTTP/1.1\r\nX-Slow: ";
	send_all(fd, part, strlen(part));
	bool closed = false;
	for (int i = 0; i < 400 && !closed; i++) {
		if (send(fd, "a", 1, MSG_NOSIGNAL) != 1) {
			closed = true;     /* reset by the server */
			break;
		}
		closed = closed_within(fd, 100);
	}
	close(fd);
	cr_assert(closed, "a byte-at-a-time request head is never timed out");
	/* Empty lines forever (they precede a request and are skipped). */
	fd = connect_port(srv.port);
	closed = false;
	for (int i = 0; i < 400 && !closed; i++) {
		if (send(fd, "\r\n", 2, MSG_NOSIGNAL) != 2) {
			closed = true;
			break;
		}
		closed = closed_within(fd, 100);
	}
	close(fd);
	cr_assert(closed, "a stream of empty lines is never timed out");
	/* A connection that sends nothing, and an idle keep-alive one. */
	fd = connect_port(srv.port);
	cr_assert(closed_within(fd, 30000), "a silent connection stays open");
	close(fd);
	fd = connect_port(srv.port);
	send_all(fd, GET("/index.html"), strlen(GET("/index.html")));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	response_free(&r);
	cr_assert(closed_within(fd, 30000), "an idle keep-alive connection stays open");
	close(fd);
	stop_ok();
}

Test(fileserver_hostile, a_client_that_never_reads_does_not_block_others, .timeout = 90)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rr", "--workers", "1",
	             "--send-timeout-ms", "500", NULL);
	size_t size = 16u << 20;
	char *data = calloc(1, size);
	root_write(root, "big.bin", data, size);
	free(data);
	int lazy = connect_port(srv.port);
	int small = 4096;
	setsockopt(lazy, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	for (int i = 0; i < 4; i++)
		send_all(lazy, GET("/big.bin"), strlen(GET("/big.bin")));
	/* One worker, and it must still serve others. */
	for (int i = 0; i < 20; i++)
		still_serving();
	cr_assert(reset_within(lazy, 60000), "a stalled reader is never closed");
	close(lazy);
	stop_ok();
}

Test(fileserver_hostile, connections_beyond_the_limit_get_503, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "reuseport", "--workers", "2",
	             "--max-connections", "4", NULL);
	int held[4];
	for (int i = 0; i < 4; i++) {
		held[i] = connect_port(srv.port);
		send_all(held[i], GET("/index.html"), strlen(GET("/index.html")));
		struct response r;
		cr_assert(read_response(held[i], &r, false));
		response_free(&r);
	}
	cr_assert_eq(request_status(srv.port, GET("/index.html")), 503);
	for (int i = 0; i < 4; i++)
		close(held[i]);
	/* The slots come back once they are closed. */
	int status = 0;
	for (int i = 0; i < 200 && status != 200; i++)
		status = request_status(srv.port, GET("/index.html"));
	cr_assert_eq(status, 200);
	cr_assert_eq(server_stop(&srv, NULL), 0);
}

Test(fileserver_hostile, sigint_with_requests_half_sent_shuts_down_cleanly, .timeout = 60)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rs", "--workers", "4", NULL);
	int fds[16];
	for (int i = 0; i < 16; i++) {
		fds[i] = connect_port(srv.port);
		send_all(fds[i], "GET /index.html HTTP/1.1\r\nHo", 28);
	}
	char *summary;
	kill(srv.pid, SIGINT);
	cr_assert_eq(server_wait(&srv, &summary), 0);
	cr_assert(strstr(summary, "fileserver: rs, 4 workers"), "%s", summary);
	cr_assert(strstr(summary, "p99.9"), "%s", summary);
	free(summary);
	for (int i = 0; i < 16; i++) {
		cr_assert(closed_within(fds[i], 20000));
		close(fds[i]);
	}
}

/* Valid requests with random bytes changed, cut, duplicated or inserted:
 * every one gets an answer or a close, and the server keeps serving. The
 * generator is seeded, so a failure repeats. */
Test(fileserver_hostile, mutated_requests_never_hurt_the_server, .timeout = 120)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", "rs", "--workers", "2",
	             "--header-timeout-ms", "2000", NULL);
	static const char *const seeds[] = {
		GET("/index.html"),
		"HEAD /sub/page.txt HTTP/1.1\r\nHost: t\r\nConnection: keep-alive\r\n\r\n",
		"GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.0\r\nUser-Agent: x\r\n\r\n",
		"GET http://t/sub/ HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n",
	};
	static const char alphabet[] = "\r\n :/%.\0\t?#aZ09\x7f\xff";
	uint64_t x = 0x9e3779b97f4a7c15ull;
#define RNG() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	for (int round = 0; round < 400; round++) {
		char buf[1024];
		const char *seed = seeds[RNG() % 4];
		size_t len = strlen(seed);
		memcpy(buf, seed, len);
		for (int m = 0, edits = 1 + (int)(RNG() % 4); m < edits; m++) {
			size_t at = RNG() % len;
			switch (RNG() % 4) {
			case 0: buf[at] = alphabet[RNG() % (sizeof alphabet - 1)]; break;
			case 1: len = at + 1; break;
			case 2:
				if (len + 8 < sizeof buf) {
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = alphabet[RNG() % (sizeof alphabet - 1)];
					len++;
				}
				break;
			default:
				if (2 * len < sizeof buf) {
					memcpy(buf + len, buf, len);
					len *= 2;
				}
			}
		}
		int fd = connect_port(srv.port);
		send_some(fd, buf, len);
		shutdown(fd, SHUT_WR);
		cr_assert(closed_within(fd, 30000), "round %d: no close", round);
		close(fd);
	}
#undef RNG
	stop_ok();
}
