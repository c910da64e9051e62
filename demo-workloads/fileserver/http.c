/* http.c — one connection's HTTP/1.1 exchange.
 *
 * The loop in fs_http_serve: flush pending output (header, then the file by
 * sendfile); answer the next complete request in the buffer; read more. It
 * returns when the socket would block (the owner re-arms the connection) or
 * after closing it. Requests are parsed strictly (RFC 9112): one space
 * between the parts of the request line, CRLF line ends, no obsolete line
 * folding, token header names, exactly one Host in HTTP/1.1, no request
 * bodies on GET or HEAD. Anything the parser refuses gets its status code
 * and the connection is closed after it.
 *
 * Paths: the target is percent-decoded (a decoded NUL or control byte is a
 * 400), split on '/', and a ".." segment is refused (403) before any file
 * system call. The remaining relative path is opened with openat2() and
 * RESOLVE_BENEATH beneath the root's descriptor, so a symbolic link (or a
 * rename race) cannot lead outside the root either: the kernel refuses it
 * with EXDEV (403). Only regular files are served; a directory serves its
 * index.html.
 */
#include "fileserver.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

const int fs_status_code[FS_STATUS_COUNT] = {
#define FS__STATUS_CODE(code, text) code,
	FS_STATUS_MAP(FS__STATUS_CODE)
#undef FS__STATUS_CODE
};
static const char *const status_text[FS_STATUS_COUNT] = {
#define FS__STATUS_TEXT(code, text) text,
	FS_STATUS_MAP(FS__STATUS_TEXT)
#undef FS__STATUS_TEXT
};

/* Most bytes one serve call sends before yielding its thread to other
 * connections (a large file to a fast reader would hold it otherwise). */
#define FS_SEND_SLICE (1u << 20)
#define FS_MAX_HEADERS 100

enum method { M_GET, M_HEAD, M_OTHER_KNOWN, M_UNKNOWN };

struct request {
	enum method method;
	const char *target;
	size_t target_len;
	int minor;            /* HTTP/1.minor */
	bool keep_alive;
};

static bool is_tchar(unsigned char ch)
{
	return isalnum(ch) || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool token_eq(const char *p, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

/* The response head (and, for errors, the short body) into c->hdr. */
static void build_head(struct fs_conn *c, enum fs_status st, bool head_only,
                       uint64_t body_len, const char *type, bool with_allow)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	bool error = st != FS_STATUS_200;
	char body[64] = "";
	if (error) {
		snprintf(body, sizeof body, "%d %s\n", fs_status_code[st], status_text[st]);
		body_len = strlen(body);
		type = "text/plain";
	}
	int n = snprintf(c->hdr, sizeof c->hdr,
	                 "HTTP/1.1 %d %s\r\nServer: convoy-fileserver\r\nDate: %s\r\n"
	                 "Content-Type: %s\r\nContent-Length: %llu\r\n%s"
	                 "Connection: %s\r\n\r\n%s",
	                 fs_status_code[st], status_text[st], date, type,
	                 (unsigned long long)body_len,
	                 with_allow ? "Allow: GET, HEAD\r\n" : "",
	                 c->close_after ? "close" : "keep-alive",
	                 error && !head_only ? body : "");
	c->hdr_len = (uint16_t)n;
	c->hdr_off = 0;
}

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
		{ "html", "text/html" }, { "htm", "text/html" },
		{ "txt", "text/plain" }, { "css", "text/css" },
		{ "js", "text/javascript" }, { "json", "application/json" },
		{ "svg", "image/svg+xml" }, { "png", "image/png" },
		{ "jpg", "image/jpeg" }, { "jpeg", "image/jpeg" },
		{ "gif", "image/gif" }, { "ico", "image/x-icon" },
		{ "pdf", "application/pdf" }, { "wasm", "application/wasm" },
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	if (dot && (!slash || dot > slash))
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strcasecmp(dot + 1, types[i][0]) == 0)
				return types[i][1];
	return "application/octet-stream";
}

static int hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9') return ch - '0';
	ch |= 0x20;
	if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
	return -1;
}

static int open_beneath(int dirfd, const char *rel)
{
	struct open_how how = {
		/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
}

static enum fs_status status_for_open_errno(int err)
{
	switch (err) {
	case ENOENT: case ENOTDIR: case ENAMETOOLONG: return FS_STATUS_404;
	case EXDEV: case ELOOP: case EACCES: case EPERM: return FS_STATUS_403;
	default: return FS_STATUS_500;
	}
}

/* Maps the request target to an open regular file beneath the root. */
static enum fs_status resolve(struct fs_server *s, const char *t, size_t n,
                              int *fd_out, struct stat *st, char *path)
{
	/* Absolute form ("http://host/p"): servers must accept it; keep the
	 * path. */
	if (n >= 7 && strncasecmp(t, "http://", 7) == 0) {
		const char *p = memchr(t + 7, '/', n - 7);
		if (!p)
			return FS_STATUS_400;
		n -= (size_t)(p - t);
		t = p;
	}
	if (n == 0 || t[0] != '/')
		return FS_STATUS_400;
	/* Decode segment by segment into path, relative to the root. */
	size_t out = 0, seg = 0;
	path[0] = '\0';
	for (size_t i = 0; i <= n; i++) {
		unsigned char ch = i < n ? (unsigned char)t[i] : '/';
		if (ch == '?' || ch == '#')
			ch = '/', n = i;       /* query and fragment end the path */
		else if (ch == '%') {
			int hi = i + 2 < n ? hexval((unsigned char)t[i + 1]) : -1;
			int lo = i + 2 < n ? hexval((unsigned char)t[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return FS_STATUS_400;
			ch = (unsigned char)(hi << 4 | lo);
			i += 2;
			if (ch == '/')        /* no file name holds a slash */
				return FS_STATUS_404;
			if (ch < 0x20 || ch == 0x7f)
				return FS_STATUS_400;
			path[out++] = (char)ch;
			continue;
		}
		if (ch != '/') {
			if (ch < 0x21 || ch == 0x7f)
				return FS_STATUS_400;
			path[out++] = (char)ch;
			continue;
		}
		/* End of a segment: path[seg, out). */
		size_t len = out - seg;
		if (len == 0 || (len == 1 && path[seg] == '.')) {
			out = seg;            /* "//" and "/./" */
		} else if (len == 2 && path[seg] == '.' && path[seg + 1] == '.') {
			return FS_STATUS_403; /* never walk up, encoded or not */
		} else {
			path[out++] = '/';
			seg = out;
		}
		if (i >= n)
			break;
	}
	if (out > 0 && path[out - 1] == '/')
		out--;
	path[out] = '\0';

	int fd = open_beneath(s->root_fd, out ? path : ".");
	if (fd < 0)
		return status_for_open_errno(errno);
	if (fstat(fd, st) != 0) {
		close(fd);
		return FS_STATUS_500;
	}
	if (S_ISDIR(st->st_mode)) {
		int index = open_beneath(fd, "index.html"), err = errno;
		close(fd);
		if (index < 0)
			return status_for_open_errno(err);
		fd = index;
		strcpy(path + out, out ? "/index.html" : "index.html");
		if (fstat(fd, st) != 0) {
			close(fd);
			return FS_STATUS_500;
		}
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return FS_STATUS_403;
	}
	*fd_out = fd;
	return FS_STATUS_200;
}

/* Parses the request line. Returns FS_STATUS_200 when it is well formed. */
static enum fs_status parse_request_line(const char *p, size_t n, struct request *r)
{
	const char *sp1 = memchr(p, ' ', n);
	if (!sp1 || sp1 == p)
		return FS_STATUS_400;
	size_t mlen = (size_t)(sp1 - p);
	for (size_t i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)p[i]))
			return FS_STATUS_400;
	const char *rest = sp1 + 1, *end = p + n;
	const char *sp2 = memchr(rest, ' ', (size_t)(end - rest));
	if (!sp2 || sp2 == rest)
		return FS_STATUS_400;
	r->target = rest;
	r->target_len = (size_t)(sp2 - rest);
	for (size_t i = 0; i < r->target_len; i++) {
		unsigned char ch = (unsigned char)rest[i];
		if (ch <= 0x20 || ch >= 0x7f)
			return FS_STATUS_400;
	}
	const char *v = sp2 + 1;
	size_t vlen = (size_t)(end - v);
	if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || !isdigit((unsigned char)v[5]) ||
	    v[6] != '.' || !isdigit((unsigned char)v[7]))
		return FS_STATUS_400;
	if (v[5] != '1')
		return FS_STATUS_505;
	r->minor = v[7] - '0';
	static const char *const other[] = { "POST", "PUT", "DELETE", "PATCH",
	                                     "OPTIONS", "TRACE", "CONNECT" };
	/* Methods are case-sensitive. */
	if (mlen == 3 && memcmp(p, "GET", 3) == 0)
		r->method = M_GET;
	else if (mlen == 4 && memcmp(p, "HEAD", 4) == 0)
		r->method = M_HEAD;
	else {
		r->method = M_UNKNOWN;
		for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
			if (strlen(other[i]) == mlen && memcmp(p, other[i], mlen) == 0)
				r->method = M_OTHER_KNOWN;
	}
	return FS_STATUS_200;
}

/* Parses the header block [p, end) (each line ends with CRLF). */
static enum fs_status parse_headers(const char *p, const char *end, struct request *r,
                                    bool *has_body)
{
	unsigned hosts = 0, count = 0;
	bool close = false, keep = false;
	long long clen = -1;
	*has_body = false;
	while (p < end) {
		const char *eol = memchr(p, '\r', (size_t)(end - p));
		/* The block ends with CRLF, so eol + 1 is inside the buffer. */
		if (!eol || eol[1] != '\n')
			return FS_STATUS_400;
		if (++count > FS_MAX_HEADERS)
			return FS_STATUS_431;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon || colon == p)
			return FS_STATUS_400;  /* also obs-fold: a leading space */
		for (const char *q = p; q < colon; q++)
			if (!is_tchar((unsigned char)*q))
				return FS_STATUS_400;
		const char *v = colon + 1, *ve = eol;
		for (const char *q = v; q < ve; q++)
			if (((unsigned char)*q < 0x20 && *q != '\t') || *q == 0x7f)
				return FS_STATUS_400;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		size_t nlen = (size_t)(colon - p), vlen = (size_t)(ve - v);
		if (token_eq(p, nlen, "host")) {
			hosts++;
		} else if (token_eq(p, nlen, "content-length")) {
			if (vlen == 0 || vlen > 18)
				return FS_STATUS_400;
			long long x = 0;
			for (size_t i = 0; i < vlen; i++) {
				if (!isdigit((unsigned char)v[i]))
					return FS_STATUS_400;
				x = x * 10 + (v[i] - '0');
			}
			if (clen >= 0 && clen != x)
				return FS_STATUS_400;
			clen = x;
			if (x > 0)
				*has_body = true;
		} else if (token_eq(p, nlen, "transfer-encoding")) {
			*has_body = true;
		} else if (token_eq(p, nlen, "connection")) {
			for (const char *q = v; q < ve;) {
				while (q < ve && (*q == ' ' || *q == '\t' || *q == ','))
					q++;
				const char *t = q;
				while (q < ve && *q != ',' && *q != ' ' && *q != '\t')
					q++;
				if (token_eq(t, (size_t)(q - t), "close"))
					close = true;
				else if (token_eq(t, (size_t)(q - t), "keep-alive"))
					keep = true;
			}
		}
		p = eol + 2;
	}
	if (r->minor >= 1 && hosts != 1)
		return FS_STATUS_400;
	if (hosts > 1)
		return FS_STATUS_400;
	r->keep_alive = !close && (r->minor >= 1 || keep);
	return FS_STATUS_200;
}

static void count_status(struct fs_worker *w, enum fs_status st)
{
	w->status[st]++;
}

/* Sets up the answer to the request whose head is buf[0, head_len). */
static void answer(struct fs_server *s, struct fs_worker *w, struct fs_conn *c,
                   size_t line_len, size_t head_len)
{
	struct request r = { 0 };
	bool has_body = false;
	enum fs_status st = parse_request_line(c->buf, line_len, &r);
	if (st == FS_STATUS_200)
		st = parse_headers(c->buf + line_len + 2, c->buf + head_len - 2, &r,
		                   &has_body);
	bool head_only = st == FS_STATUS_200 && r.method == M_HEAD;
	c->close_after = st != FS_STATUS_200 || !r.keep_alive;
	if (st == FS_STATUS_200) {
		if (r.method == M_UNKNOWN)
			st = FS_STATUS_501;
		else if (r.method == M_OTHER_KNOWN)
			st = FS_STATUS_405;
		else if (has_body)
			st = FS_STATUS_400;
	}
	/* We never read request bodies: after any request that has one, the
	 * stream cannot be trusted, so the connection ends. */
	if (has_body || st == FS_STATUS_501)
		c->close_after = true;
	if (st == FS_STATUS_200) {
		char path[FS_REQ_MAX + 16];
		struct stat sb;
		int fd = -1;
		st = resolve(s, r.target, r.target_len, &fd, &sb, path);
		if (st == FS_STATUS_200) {
			build_head(c, st, head_only, (uint64_t)sb.st_size,
			           content_type(path), false);
			if (head_only || sb.st_size == 0) {
				close(fd);
			} else {
				c->file_fd = fd;
				c->file_off = 0;
				c->file_end = sb.st_size;
			}
			count_status(w, st);
			return;
		}
	}
	if (st == FS_STATUS_500)
		c->close_after = true;
	build_head(c, st, head_only, 0, NULL, st == FS_STATUS_405);
	count_status(w, st);
}

enum flush_result { FLUSH_DONE, FLUSH_AGAIN, FLUSH_ERROR };

static enum flush_result flush(struct fs_conn *c)
{
	size_t sent = 0;
	while (c->hdr_off < c->hdr_len) {
		int more = c->file_fd >= 0 ? MSG_MORE : 0;
		ssize_t n = send(c->fd, c->hdr + c->hdr_off, c->hdr_len - c->hdr_off,
		                 MSG_NOSIGNAL | more);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? FLUSH_AGAIN : FLUSH_ERROR;
		}
		c->hdr_off += (uint16_t)n;
	}
	while (c->file_fd >= 0 && c->file_off < c->file_end) {
		if (sent >= FS_SEND_SLICE)
			return FLUSH_AGAIN;    /* EPOLLOUT fires at once: yield */
		size_t want = (size_t)(c->file_end - c->file_off);
		if (want > FS_SEND_SLICE)
			want = FS_SEND_SLICE;
		ssize_t n = sendfile(c->fd, c->file_fd, &c->file_off, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? FLUSH_AGAIN : FLUSH_ERROR;
		}
		if (n == 0)
			return FLUSH_ERROR;    /* the file shrank under us */
		sent += (size_t)n;
	}
	if (c->file_fd >= 0) {
		close(c->file_fd);
		c->file_fd = -1;
	}
	c->hdr_len = c->hdr_off = 0;
	return FLUSH_DONE;
}

/* Where the head ends (just past CRLF CRLF), or 0 if not yet in the buffer;
 * *line_len: the request line's length without its CRLF. */
static size_t head_end(const char *buf, size_t len, size_t *line_len)
{
	const char *crlf = memmem(buf, len, "\r\n", 2);
	if (!crlf)
		return 0;
	*line_len = (size_t)(crlf - buf);
	/* From the line's own CRLF: a request with no headers ends there. */
	const char *e = memmem(crlf, len - *line_len, "\r\n\r\n", 4);
	return e ? (size_t)(e - buf) + 4 : 0;
}

static void record(struct fs_worker *w, struct fs_conn *c)
{
	c->idle_since_ns = fs_now_ns();
	uint64_t ns = c->idle_since_ns - c->ready_ns;
	fs_hist_add(&w->latency, ns);
	fs_hist_add(&w->window, ns);
	atomic_store_explicit(&w->requests,
	                      atomic_load_explicit(&w->requests, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}

bool fs_http_serve(struct fs_server *s, struct fs_worker *w, struct fs_conn *c)
{
	for (;;) {
		if (c->hdr_len) {
			enum flush_result f = flush(c);
			if (f == FLUSH_ERROR)
				break;
			if (f == FLUSH_AGAIN) {
				c->want_out = true;
				atomic_store_explicit(&c->deadline_ns,
				                      fs_now_ns() + s->cfg.send_timeout_ms * 1000000ull,
				                      memory_order_relaxed);
				return true;
			}
			record(w, c);
			if (c->close_after)
				break;
		}
		c->want_out = false;
		/* Leading empty lines before a request are ignored (RFC 9112 2.2). */
		size_t skip = 0;
		while (skip + 1 < c->len && c->buf[skip] == '\r' && c->buf[skip + 1] == '\n')
			skip += 2;
		if (skip) {
			memmove(c->buf, c->buf + skip, c->len - skip);
			c->len -= (uint32_t)skip;
		}
		size_t line_len = 0, end = c->len ? head_end(c->buf, c->len, &line_len) : 0;
		if (end) {
			answer(s, w, c, line_len, end);
			memmove(c->buf, c->buf + end, c->len - end);
			c->len -= (uint32_t)end;
			if (c->len)
				c->head_start_ns = fs_now_ns();
			continue;
		}
		if (c->len == FS_REQ_MAX) {
			/* No room left and no end of head: refuse it. */
			bool have_line = memmem(c->buf, c->len, "\r\n", 2) != NULL;
			enum fs_status st = have_line ? FS_STATUS_431 : FS_STATUS_414;
			c->close_after = true;
			c->len = 0;
			build_head(c, st, false, 0, NULL, false);
			count_status(w, st);
			continue;
		}
		if (c->peer_eof)
			break;
		ssize_t n = recv(c->fd, c->buf + c->len, FS_REQ_MAX - c->len, 0);
		if (n > 0) {
			if (c->len == 0)
				c->head_start_ns = fs_now_ns();
			c->len += (uint32_t)n;
			continue;
		}
		if (n == 0) {
			c->peer_eof = true;   /* answered what was complete; done */
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			break;
		/* Wait for input: a request in progress must complete within
		 * the header timeout from its first byte, an idle connection
		 * within the keep-alive timeout from its last response. Neither
		 * moves while bytes trickle in (slowloris), nor with empty lines,
		 * which are skipped without counting as a request. */
		uint64_t deadline = c->len
			? c->head_start_ns + s->cfg.header_timeout_ms * 1000000ull
			: c->idle_since_ns + s->cfg.keepalive_timeout_ms * 1000000ull;
		atomic_store_explicit(&c->deadline_ns, deadline, memory_order_relaxed);
		return true;
	}
	fs_conn_close(s, c);
	return false;
}

static void send_once(int fd, const char *msg)
{
	(void)send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void fs_http_refuse_full(int fd)
{
	send_once(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
	              "Connection: close\r\nRetry-After: 1\r\n\r\n");
}

void fs_http_timeout(struct fs_conn *c)
{
	if (c->len && !c->hdr_len)
		send_once(c->fd, "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n"
		                 "Connection: close\r\n\r\n");
}
