/* client.h — what the fileserver tests share: a document root in a fresh
 * temporary directory, the server as a child process on a loopback port, and
 * a small blocking HTTP client with every wait bounded. */
#ifndef FS_TEST_CLIENT_H
#define FS_TEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct server {
	pid_t pid;
	unsigned port;
	int out_fd;          /* the server's stdout, after the port line */
	char root[256];
	char json[300];      /* where --stats-json writes */
};

struct response {
	int status;          /* 0: no complete response (closed or timed out) */
	char head[8192];
	size_t content_length;
	bool has_length;
	char *body;          /* malloc'd, content_length bytes (none for HEAD) */
};

/* Writes a file (mode 0644) under root; returns its full path. */
void root_write(const char *root, const char *rel, const void *data, size_t len);
/* A fresh document root with index.html ("hello\n") and sub/page.txt. */
void root_make(char *root, size_t size);
/* Removes it, and the JSON a server wrote beside it. */
void root_remove(const char *root);

/* Starts FILESERVER_BIN --root root --port 0 --stats-json ... plus the
 * NULL-terminated extra arguments. */
void server_start(struct server *s, const char *root, ...);
/* SIGTERM, wait; returns the exit status (128 + signal if killed). The
 * summary printed at shutdown is stored in *summary when not NULL. */
int server_stop(struct server *s, char **summary);
/* The same without the signal: for a server that ends by itself. */
int server_wait(struct server *s, char **summary);

int connect_port(unsigned port);
/* Sends all of buf. */
void send_all(int fd, const void *buf, size_t len);
/* Reads one response (head, and body unless head_only). */
bool read_response(int fd, struct response *r, bool head_only);
void response_free(struct response *r);
/* One request on a new connection, raw bytes in; the connection closed after. */
int request_status(unsigned port, const char *raw);
/* Whether the server closes fd (EOF or reset) within timeout_ms, after
 * reading and discarding what it sends. */
bool closed_within(int fd, int timeout_ms);
/* Whether the server resets fd within timeout_ms, reading nothing. */
bool reset_within(int fd, int timeout_ms);

#endif
