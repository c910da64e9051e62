/* test_fileserver — build/demos/fileserver over loopback.
 *
 * Each test starts its own server (a child process on a free 127.0.0.1 port,
 * a fresh document root) and talks to it with the blocking client in
 * client.c. Results are checked byte for byte; nothing depends on timing
 * except that the timeout tests wait (boundedly) for the server's own
 * timeouts to close a connection.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"

#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\n\r\n"

static struct server srv;
static char root[256];

/* Runs after each test, passed or failed (the server is gone by then: it
 * exits with the test process at the latest). */
static void cleanup(void)
{
	char secret[300];
	snprintf(secret, sizeof secret, "%s-secret", root);
	unlink(secret);
	root_remove(root);
}

TestSuite(fileserver, .fini = cleanup);

static void start(const char *sched, const char *workers)
{
	root_make(root, sizeof root);
	server_start(&srv, root, "--scheduler", sched, "--workers", workers, NULL);
}

static void stop_ok(void)
{
	cr_assert_eq(server_stop(&srv, NULL), 0, "the server did not exit cleanly");
}

/* --- the basics ------------------------------------------------------------------ */

Test(fileserver, get_returns_the_file, .timeout = 60)
{
	start("rs", "2");
	int fd = connect_port(srv.port);
	send_all(fd, GET("/index.html"), strlen(GET("/index.html")));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.content_length, 6);
	cr_assert_str_eq(r.body, "hello\n");
	cr_assert(strstr(r.head, "Content-Type: text/html\r\n"), "%s", r.head);
	response_free(&r);
	close(fd);
	cr_assert_eq(request_status(srv.port, GET("/")), 200, "/ serves index.html");
	cr_assert_eq(request_status(srv.port, GET("/sub/page.txt?x=1#frag")), 200);
	cr_assert_eq(request_status(srv.port, "GET http://t/sub/page.txt HTTP/1.1\r\nHost: t\r\n\r\n"), 200);
	stop_ok();
}

Test(fileserver, head_sends_the_headers_without_the_body, .timeout = 60)
{
	start("rr", "2");
	int fd = connect_port(srv.port);
	const char *req = "HEAD /index.html HTTP/1.1\r\nHost: t\r\n\r\n";
	send_all(fd, req, strlen(req));
	struct response r;
	cr_assert(read_response(fd, &r, true));
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.content_length, 6);
	/* The next response must follow at once: no body came in between. */
	send_all(fd, GET("/sub/page.txt"), strlen(GET("/sub/page.txt")));
	struct response r2;
	cr_assert(read_response(fd, &r2, false));
	cr_assert_eq(r2.status, 200);
	cr_assert_str_eq(r2.body, "page\n");
	response_free(&r2);
	close(fd);
	stop_ok();
}

Test(fileserver, a_missing_file_is_404_and_the_connection_stays_open, .timeout = 60)
{
	start("lqs", "2");
	int fd = connect_port(srv.port);
	send_all(fd, GET("/nope.html"), strlen(GET("/nope.html")));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 404);
	response_free(&r);
	send_all(fd, GET("/index.html"), strlen(GET("/index.html")));
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 200);
	response_free(&r);
	close(fd);
	cr_assert_eq(request_status(srv.port, GET("/sub/")), 404, "a directory without index.html");
	stop_ok();
}

struct bad_case {
	const char *raw;
	int status;
};

static const struct bad_case malformed[] = {
	{ "GARBAGE\r\n\r\n", 400 },
	{ "GET /\r\n\r\n", 400 },                               /* HTTP/0.9 */
	{ "GET  / HTTP/1.1\r\nHost: t\r\n\r\n", 400 },          /* two spaces */
	{ "GET / HTTP/1.1 \r\nHost: t\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\n\r\n", 400 },                      /* no Host */
	{ "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\nHost: t\r\n\r\n", 400 },             /* bare LF */
	{ "GET / HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n", 400 }, /* obs-fold */
	{ "GET / HTTP/1.1\r\nHost : t\r\n\r\n", 400 },           /* space before colon */
	{ "GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400 },
	{ "GET /%zz HTTP/1.1\r\nHost: t\r\n\r\n", 400 },
	{ "GET /%4 HTTP/1.1\r\nHost: t\r\n\r\n", 400 },
	{ "GET index.html HTTP/1.1\r\nHost: t\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", 400 },
	{ "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n", 400 },
	{ "GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400 },
	{ "GET / HTTP/9.9\r\nHost: t\r\n\r\n", 505 },
	{ "GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505 },
	{ "GET / FTP/1.1\r\nHost: t\r\n\r\n", 400 },
	{ "POST /index.html HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n", 405 },
	{ "DELETE /index.html HTTP/1.1\r\nHost: t\r\n\r\n", 405 },
	{ "BREW /pot HTTP/1.1\r\nHost: t\r\n\r\n", 501 },
	{ "get / HTTP/1.1\r\nHost: t\r\n\r\n", 501 },            /* methods are case-sensitive */
};

Test(fileserver, malformed_and_unsupported_requests_get_their_status, .timeout = 60)
{
	start("rs", "2");
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		cr_expect_eq(request_status(srv.port, malformed[i].raw), malformed[i].status,
		             "request %zu: %s", i, malformed[i].raw);
	int fd = connect_port(srv.port);
	const char *req = "PUT /x HTTP/1.1\r\nHost: t\r\n\r\n";
	send_all(fd, req, strlen(req));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 405);
	cr_assert(strstr(r.head, "\r\nAllow: GET, HEAD\r\n"), "%s", r.head);
	response_free(&r);
	close(fd);
	stop_ok();
}

Test(fileserver, a_request_with_a_nul_byte_is_refused, .timeout = 60)
{
	start("rr", "1");
	static const char raw1[] = "GET /index.html\0.txt HTTP/1.1\r\nHost: t\r\n\r\n";
	static const char raw2[] = "GET /index.html HTTP/1.1\r\nHost: t\0x\r\n\r\n";
	const char *raws[] = { raw1, raw2 };
	size_t lens[] = { sizeof raw1 - 1, sizeof raw2 - 1 };
	for (int i = 0; i < 2; i++) {
		int fd = connect_port(srv.port);
		send_all(fd, raws[i], lens[i]);
		struct response r;
		cr_assert(read_response(fd, &r, false));
		cr_assert_eq(r.status, 400, "case %d", i);
		response_free(&r);
		close(fd);
	}
	cr_assert_eq(request_status(srv.port, GET("/index.html%00.txt")), 400);
	stop_ok();
}

/* --- the document root ----------------------------------------------------------- */

Test(fileserver, nothing_outside_the_root_is_served, .timeout = 60)
{
	start("rs", "2");
	/* A secret beside the root and a symlink out of it. */
	char secret[300], link[300];
	snprintf(secret, sizeof secret, "%s-secret", root);
	FILE *f = fopen(secret, "w");
	fputs("SECRET\n", f);
	fclose(f);
	snprintf(link, sizeof link, "%s/out", root);
	cr_assert(symlink(secret, link) == 0);
	snprintf(link, sizeof link, "%s/outdir", root);
	cr_assert(symlink("/etc", link) == 0);
	snprintf(link, sizeof link, "%s/in", root);
	cr_assert(symlink("index.html", link) == 0);
	const char *name = strrchr(root, '/') + 1;
	char paths[][200] = {
		"/../etc/passwd", "/%2e%2e/etc/passwd", "/%2E%2E/%2E%2E/etc/passwd",
		"/sub/../../etc/passwd", "/..%2fetc/passwd", "/%2e%2e%2fetc%2fpasswd",
		"/sub/%2e%2e/%2e%2e/etc/passwd", "/./../etc/passwd", "/..", "/sub/..",
		"/out", "/outdir/passwd", "//etc/passwd", "/%252e%252e/etc/passwd",
		"", "",
	};
	snprintf(paths[14], sizeof paths[14], "/../%s-secret", name);
	snprintf(paths[15], sizeof paths[15], "/%%2e%%2e/%s-secret", name);
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		char req[sizeof paths[i] + 64];
		snprintf(req, sizeof req, "GET %.199s HTTP/1.1\r\nHost: t\r\n\r\n", paths[i]);
		int fd = connect_port(srv.port);
		send_all(fd, req, strlen(req));
		struct response r;
		cr_assert(read_response(fd, &r, false), "no response to %s", paths[i]);
		cr_expect(r.status == 403 || r.status == 404 || r.status == 400,
		          "%s: status %d", paths[i], r.status);
		cr_expect(!r.body || (!strstr(r.body, "SECRET") && !strstr(r.body, "root:")),
		          "%s leaked", paths[i]);
		response_free(&r);
		close(fd);
	}
	cr_assert_eq(request_status(srv.port, GET("/out")), 403, "a symlink out of the root");
	cr_assert_eq(request_status(srv.port, GET("/in")), 200, "a symlink within the root");
	unlink(secret);
	stop_ok();
}

/* --- connections ----------------------------------------------------------------- */

Test(fileserver, keep_alive_and_pipelining_on_one_connection, .timeout = 60)
{
	start("as", "2");
	int fd = connect_port(srv.port);
	for (int i = 0; i < 200; i++) {
		send_all(fd, GET("/index.html"), strlen(GET("/index.html")));
		struct response r;
		cr_assert(read_response(fd, &r, false), "request %d", i);
		cr_assert_eq(r.status, 200);
		cr_assert(strstr(r.head, "Connection: keep-alive"));
		response_free(&r);
	}
	/* Ten pipelined requests in one write, answered in order. */
	char batch[4096] = "";
	for (int i = 0; i < 10; i++)
		strcat(batch, i % 2 ? GET("/sub/page.txt") : GET("/index.html"));
	send_all(fd, batch, strlen(batch));
	for (int i = 0; i < 10; i++) {
		struct response r;
		cr_assert(read_response(fd, &r, false), "pipelined %d", i);
		cr_assert_str_eq(r.body, i % 2 ? "page\n" : "hello\n");
		response_free(&r);
	}
	/* Connection: close is honoured; HTTP/1.0 closes by default. */
	const char *last = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	send_all(fd, last, strlen(last));
	struct response r;
	cr_assert(read_response(fd, &r, false));
	response_free(&r);
	cr_assert(closed_within(fd, 20000));
	close(fd);
	fd = connect_port(srv.port);
	send_all(fd, "GET / HTTP/1.0\r\n\r\n", 18);
	cr_assert(read_response(fd, &r, false));
	cr_assert_eq(r.status, 200);
	response_free(&r);
	cr_assert(closed_within(fd, 20000));
	close(fd);
	stop_ok();
}

Test(fileserver, a_large_file_arrives_byte_for_byte, .timeout = 120)
{
	start("rs", "2");
	size_t size = 24u << 20;
	unsigned char *data = malloc(size);
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < size; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		data[i] = (unsigned char)x;
	}
	root_write(root, "big.bin", data, size);
	int fd = connect_port(srv.port);
	for (int round = 0; round < 2; round++) {
		send_all(fd, GET("/big.bin"), strlen(GET("/big.bin")));
		struct response r;
		cr_assert(read_response(fd, &r, false));
		cr_assert_eq(r.status, 200);
		cr_assert_eq(r.content_length, size);
		cr_assert(memcmp(r.body, data, size) == 0, "the body differs");
		response_free(&r);
	}
	close(fd);
	free(data);
	stop_ok();
}

/* --- load: many clients, every scheduler ------------------------------------------ */

struct load {
	unsigned port;
	int requests;
	const char *path;
	const char *expect;
	size_t expect_len;
	int ok;
};

static void *load_client(void *arg)
{
	struct load *l = arg;
	int fd = connect_port(l->port);
	char req[256];
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", l->path);
	for (int i = 0; i < l->requests; i++) {
		send_all(fd, req, strlen(req));
		struct response r;
		if (!read_response(fd, &r, false))
			break;
		if (r.status == 200 && r.content_length == l->expect_len &&
		    memcmp(r.body, l->expect, l->expect_len) == 0)
			l->ok++;
		response_free(&r);
	}
	close(fd);
	return NULL;
}

/* clients threads share `total` requests; returns how many came back intact. */
static int run_load(unsigned port, int clients, int total, const char *path,
                    const char *expect, size_t expect_len)
{
	pthread_t t[128];
	struct load l[128];
	int ok = 0;
	for (int i = 0; i < clients; i++) {
		l[i] = (struct load){ port, total / clients + (i < total % clients), path,
		                      expect, expect_len, 0 };
		cr_assert(pthread_create(&t[i], NULL, load_client, &l[i]) == 0);
	}
	for (int i = 0; i < clients; i++) {
		pthread_join(t[i], NULL);
		ok += l[i].ok;
	}
	return ok;
}

static char *page_text(size_t n)
{
	char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + (i * 7 + i / 26) % 26);
	return p;
}

Test(fileserver, many_concurrent_clients, .timeout = 120)
{
	start("rs", "4");
	char *page = page_text(3000);
	root_write(root, "page.html", page, 3000);
	cr_assert_eq(run_load(srv.port, 100, 3000, "/page.html", page, 3000), 3000);
	free(page);
	stop_ok();
}

/* By value: Criterion runs each test in a fresh process, where the address of
 * a string in this one means nothing. */
struct scheduler_case {
	char name[16];
};

ParameterizedTestParameters(fileserver, every_scheduler_serves_3000_requests_intact)
{
	static struct scheduler_case scheds[] = { { "rr" }, { "rs" }, { "lqs" }, { "as" },
	                                       { "reuseport" } };
	return cr_make_param_array(struct scheduler_case, scheds, 5);
}

ParameterizedTest(struct scheduler_case *param, fileserver,
                  every_scheduler_serves_3000_requests_intact, .timeout = 240)
{
	const char *sched = param->name;
	start(sched, "4");
	char *page = page_text(1500);
	root_write(root, "page.html", page, 1500);
	cr_assert_eq(run_load(srv.port, 32, 3000, "/page.html", page, 1500), 3000,
	             "%s lost or corrupted responses", sched);
	free(page);
	char *summary;
	cr_assert_eq(server_stop(&srv, &summary), 0);
	cr_assert(strstr(summary, "status: 200 x3000;"), "%s", summary);
	free(summary);
	/* The JSON says the same. */
	FILE *f = fopen(srv.json, "r");
	cr_assert(f);
	char json[1 << 16];
	size_t n = fread(json, 1, sizeof json - 1, f);
	json[n] = '\0';
	fclose(f);
	cr_assert(strstr(json, "\"requests\":3000"), "%s", json);
	cr_assert(strstr(json, "\"p99.9\""), "%s", json);
}
