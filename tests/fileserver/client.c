/* client.c — see client.h. Every socket has a receive timeout, so a test
 * that goes wrong fails instead of hanging (Criterion's timeout is the last
 * resort). */
#include "client.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FILESERVER_BIN
#error "build with -DFILESERVER_BIN='\"/abs/path/build/demos/fileserver\"'"
#endif

void root_write(const char *root, const char *rel, const void *data, size_t len)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

void root_make(char *root, size_t size)
{
	snprintf(root, size, "/tmp/fs-test-XXXXXX");
	cr_assert(mkdtemp(root) != NULL, "mkdtemp: %s", strerror(errno));
	char sub[512];
	snprintf(sub, sizeof sub, "%s/sub", root);
	cr_assert(mkdir(sub, 0755) == 0);
	root_write(root, "index.html", "hello\n", 6);
	root_write(root, "sub/page.txt", "page\n", 5);
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

void root_remove(const char *root)
{
	char json[300];
	if (!root[0])
		return;
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(json, sizeof json, "%s.json", root);
	unlink(json);
}

void server_start(struct server *s, const char *root, ...)
{
	char *argv[40];
	int n = 0;
	snprintf(s->root, sizeof s->root, "%s", root);
	snprintf(s->json, sizeof s->json, "%s.json", root);
	argv[n++] = FILESERVER_BIN;
	argv[n++] = "--root";
	argv[n++] = (char *)root;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--stats-json";
	argv[n++] = s->json;
	va_list ap;
	va_start(ap, root);
	for (const char *a; (a = va_arg(ap, const char *)) && n < 38;)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	int p[2];
	cr_assert(pipe2(p, O_CLOEXEC) == 0);
	fflush(NULL);
	s->pid = fork();
	cr_assert(s->pid >= 0);
	if (s->pid == 0) {
		/* A test that fails (or times out) never leaves a server behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	s->out_fd = p[0];
	/* The first line is the port. */
	char line[32];
	size_t len = 0;
	while (len < sizeof line - 1) {
		struct pollfd pfd = { .fd = s->out_fd, .events = POLLIN };
		cr_assert(poll(&pfd, 1, 30000) == 1, "the server printed no port");
		ssize_t r = read(s->out_fd, line + len, 1);
		cr_assert(r == 1, "the server exited before printing its port");
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = '\0';
	s->port = (unsigned)atoi(line);
	cr_assert(s->port > 0 && s->port < 65536, "bad port line '%s'", line);
}

int server_stop(struct server *s, char **summary)
{
	kill(s->pid, SIGTERM);
	return server_wait(s, summary);
}

int server_wait(struct server *s, char **summary)
{
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	for (;;) {
		struct pollfd pfd = { .fd = s->out_fd, .events = POLLIN };
		if (poll(&pfd, 1, 30000) != 1)
			break;
		ssize_t r = read(s->out_fd, text + len, cap - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len == cap - 1)
			break;
	}
	text[len] = '\0';
	close(s->out_fd);
	int st;
	cr_assert_eq(waitpid(s->pid, &st, 0), s->pid);
	if (summary)
		*summary = text;
	else
		free(text);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int connect_port(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0);
	struct timeval tv = { .tv_sec = 20 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	cr_assert(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect: %s",
	          strerror(errno));
	return fd;
}

void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		cr_assert(n > 0, "send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

bool read_response(int fd, struct response *r, bool head_only)
{
	memset(r, 0, sizeof *r);
	size_t len = 0;
	/* Byte by byte up to the end of the head, so nothing of the next
	 * response (pipelining) is consumed. */
	while (len < sizeof r->head - 1) {
		ssize_t n = recv(fd, r->head + len, 1, 0);
		if (n <= 0)
			return false;
		len++;
		if (len >= 4 && memcmp(r->head + len - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	r->head[len] = '\0';
	if (sscanf(r->head, "HTTP/1.1 %d ", &r->status) != 1)
		return false;
	const char *cl = strcasestr(r->head, "\r\nContent-Length:");
	if (cl) {
		r->has_length = true;
		r->content_length = strtoull(cl + 17, NULL, 10);
	}
	if (head_only || !r->has_length)
		return true;
	r->body = malloc(r->content_length + 1);
	size_t got = 0;
	while (got < r->content_length) {
		ssize_t n = recv(fd, r->body + got, r->content_length - got, 0);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	r->body[got] = '\0';
	return true;
}

void response_free(struct response *r)
{
	free(r->body);
	r->body = NULL;
}

int request_status(unsigned port, const char *raw)
{
	int fd = connect_port(port);
	send_all(fd, raw, strlen(raw));
	struct response r;
	int status = read_response(fd, &r, false) ? r.status : 0;
	response_free(&r);
	close(fd);
	return status;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool closed_within(int fd, int timeout_ms)
{
	static char sink[1 << 16];
	for (int64_t end = now_ms() + timeout_ms; now_ms() < end;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 100) == 1) {
			ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN))
				return true;
		}
	}
	return false;
}

bool reset_within(int fd, int timeout_ms)
{
	for (int64_t end = now_ms() + timeout_ms; now_ms() < end;) {
		struct pollfd pfd = { .fd = fd, .events = 0 };
		if (poll(&pfd, 1, 100) == 1 && (pfd.revents & (POLLERR | POLLHUP)))
			return true;
	}
	return false;
}
