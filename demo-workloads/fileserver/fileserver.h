/* fileserver.h — seed 004's static file server: the parts its files share.
 *
 *   main.c    command line, start-up, signals, shutdown, the stats report
 *   conn.c    the connection table and the claim protocol (who may touch a
 *             connection), timeouts
 *   http.c    one connection's request/response loop: parsing, path
 *             resolution beneath the root, sendfile
 *   sched.c   the five schedulers: which thread serves a ready connection
 *   stats.c   log2 latency histograms, percentiles, the JSON report
 *   load.c    the closed-loop load generator (--load), a child process
 *
 * docs/fileserver.md describes the design and the measurements.
 */
#ifndef FILESERVER_H
#define FILESERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "workpool/internal.h"

#define FS_CACHE_LINE 64

/* Limits a client cannot move. */
enum {
	FS_REQ_MAX = 8192,      /* request line + headers, bytes */
	FS_HDR_OUT_MAX = 512,   /* our response header */
	FS_MAX_WORKERS = 256,
	FS_HIST_BUCKETS = 64,   /* log2 buckets of nanoseconds */
};

/* --- response status codes (http.c) ------------------------------------------ */

#define FS_STATUS_MAP(X)                                  \
	X(200, "OK")                                      \
	X(400, "Bad Request")                             \
	X(403, "Forbidden")                               \
	X(404, "Not Found")                               \
	X(405, "Method Not Allowed")                      \
	X(408, "Request Timeout")                         \
	X(414, "URI Too Long")                            \
	X(431, "Request Header Fields Too Large")         \
	X(500, "Internal Server Error")                   \
	X(501, "Not Implemented")                         \
	X(503, "Service Unavailable")                     \
	X(505, "HTTP Version Not Supported")

enum fs_status {
#define FS__STATUS_ENUM(code, text) FS_STATUS_##code,
	FS_STATUS_MAP(FS__STATUS_ENUM)
#undef FS__STATUS_ENUM
	FS_STATUS_COUNT
};
extern const int fs_status_code[FS_STATUS_COUNT];

/* --- schedulers (sched.c) --------------------------------------------------- */

#define FS_SCHED_MAP(X)                                                          \
	X(RR,        "rr",        "round robin into per-worker mutex queues, one accept thread") \
	X(RS,        "rs",        "random-victim stealing on Chase-Lev deques")     \
	X(LQS,       "lqs",       "longest-queue stealing on Chase-Lev deques")     \
	X(AS,        "as",        "adaptive stealing: steal harder while the moving p99 is above target") \
	X(REUSEPORT, "reuseport", "accept on every worker (SO_REUSEPORT), no stealing")

typedef enum fs_sched {
#define FS__SCHED_ENUM(name, text, what) FS_SCHED_##name,
	FS_SCHED_MAP(FS__SCHED_ENUM)
#undef FS__SCHED_ENUM
	FS_SCHED_COUNT
} fs_sched;

const char *fs_sched_name(fs_sched s);
int fs_sched_parse(const char *name, fs_sched *out);

/* --- configuration (main.c) -------------------------------------------------- */

struct fs_config {
	const char *root;
	const char *host;
	unsigned port;
	unsigned workers;
	fs_sched sched;
	unsigned max_conns;
	unsigned header_timeout_ms;    /* whole request head, from its first byte */
	unsigned keepalive_timeout_ms; /* idle between requests */
	unsigned send_timeout_ms;      /* no progress writing a response */
	uint64_t target_p99_ns;        /* adaptive stealing's target */
	uint64_t exit_after_requests;  /* 0: run until a signal */
	const char *stats_json;        /* NULL, a path, or "-" */
	const char *load_path;         /* --load: the file the generator fetches */
	unsigned load_conns;
	uint64_t load_requests;
	bool quiet;
};

/* --- histograms (stats.c) ----------------------------------------------------- */

struct fs_hist {
	uint64_t count;
	uint64_t bucket[FS_HIST_BUCKETS]; /* bucket b: [2^(b-1), 2^b) ns; 0: 0 ns */
};

void fs_hist_add(struct fs_hist *h, uint64_t ns);
void fs_hist_merge(struct fs_hist *into, const struct fs_hist *h);
/* The upper bound of the bucket holding the q-quantile (0 < q < 1): the
 * true value is at most this and more than half of it. 0 when empty. */
uint64_t fs_hist_quantile(const struct fs_hist *h, double q);

/* --- connections (conn.c) ----------------------------------------------------- */

/* Who may touch a connection. A thread that moves it IDLE -> BUSY owns it
 * until it moves it back (after re-arming its epoll registration) or frees
 * it; an event that finds it BUSY marks it BUSY_AGAIN, so the owner serves it
 * once more instead of losing the wake-up (conn.c has the argument). */
enum fs_conn_state { FS_FREE, FS_IDLE, FS_BUSY, FS_BUSY_AGAIN };

struct fs_conn {
	_Atomic int state;
	_Atomic uint64_t deadline_ns;  /* the sweeper closes IDLE ones past it */
	int fd;
	int epfd;                      /* the epoll it is registered in */
	uint64_t ready_ns;             /* when its event was seen: latency start */
	uint64_t head_start_ns;        /* first byte of the request being read */
	uint64_t idle_since_ns;        /* accepted, or the last response sent */
	/* Input: bytes read and not yet consumed. */
	uint32_t len;
	bool peer_eof;
	bool close_after;              /* close once the output is flushed */
	bool want_out;                 /* blocked writing: wait for EPOLLOUT */
	/* Output: the header, then [file_off, file_end) of file_fd. */
	uint16_t hdr_len, hdr_off;
	int file_fd;
	off_t file_off, file_end;
	char hdr[FS_HDR_OUT_MAX];
	char buf[FS_REQ_MAX];
};

struct fs_server;

/* The table is indexed by file descriptor (slots are never freed, so a
 * stale epoll event always points at a valid slot). */
int fs_conns_init(struct fs_server *s);
void fs_conns_destroy(struct fs_server *s);
/* Takes a freshly accepted socket: registers it (EPOLLONESHOT) in epfd.
 * Refuses it (503, close) when the server is full. */
void fs_conn_accept(struct fs_server *s, int fd, int epfd);
/* An epoll event for c: true if the caller now owns it and must serve it. */
bool fs_conn_claim(struct fs_conn *c);
/* The owner is done for now: re-arm for input or output, or close. Returns
 * true if an event arrived meanwhile and the owner must serve it again. */
bool fs_conn_release(struct fs_server *s, struct fs_conn *c);
void fs_conn_close(struct fs_server *s, struct fs_conn *c);
/* Closes IDLE connections whose deadline passed (slow clients). */
void fs_conns_sweep(struct fs_server *s, uint64_t now);

/* --- the server --------------------------------------------------------------- */

struct fs_worker {
	struct fs_server *server;
	unsigned index;
	pthread_t thread;
	int epfd;                       /* stealing and reuseport schedulers */
	int listen_fd;                  /* reuseport: this worker's own */
	uint64_t rng;
	/* Adaptive stealing: the last window's p99 and its moving average. */
	struct fs_hist window;
	uint64_t p99_avg_ns;
	unsigned steal_rounds;          /* idle steal rounds before sleeping */
	/* Counted by this worker only; read at shutdown. */
	struct fs_hist latency;
	_Atomic uint64_t requests;      /* responses completed */
	uint64_t status[FS_STATUS_COUNT]; /* responses by fs_status */
	uint64_t steals, steal_attempts;
	/* RR: this worker's queue (wp__fifo: mutex + ring) and its condvar. */
	struct wp__fifo queue;
	pthread_cond_t queue_cond;
	_Atomic uint64_t queue_contended;
	/* Stealing: this worker's Chase-Lev deque and the CAS operations on it
	 * that lost (by thieves and by the owner on the last element). */
	struct wp__deque deque;
	_Atomic uint64_t cas_failed WP_ALIGNED;
} WP_ALIGNED;

struct fs_server {
	struct fs_config cfg;
	int root_fd;
	int listen_fd;                  /* the accept thread's (all but reuseport) */
	unsigned port;
	int stop_fd;                    /* eventfd, written once at shutdown */
	int steal_fd;                   /* eventfd: "work to steal", wakes one */
	int accept_epfd;                /* accept thread; RR: every connection */
	pthread_t accept_thread;
	_Atomic bool stopping;
	_Atomic unsigned sleepers;      /* stealing workers blocked in epoll */
	struct fs_worker *workers;
	/* Connections. */
	struct fs_conn *conns;
	size_t nconns;                  /* table size: fds below it */
	_Atomic unsigned open_conns;
	_Atomic uint64_t refused_full;
	_Atomic uint64_t timed_out;
	uint64_t started_ns, stopped_ns;
};

uint64_t fs_now_ns(void);

/* --- http.c ------------------------------------------------------------------- */

/* Serves c until it would block or closes: reads, answers every complete
 * request in its buffer, writes. Called by the connection's owner. Returns
 * false once it has closed the connection; true when it waits for input or
 * for room to write (c->want_out), and the owner should release it. */
bool fs_http_serve(struct fs_server *s, struct fs_worker *w, struct fs_conn *c);
/* Best-effort one-shot answers written straight to a socket: "503, we are
 * full" at accept, "408" to a client timed out in the middle of a request. */
void fs_http_refuse_full(int fd);
void fs_http_timeout(struct fs_conn *c);


/* --- sched.c ------------------------------------------------------------------ */

int fs_sched_start(struct fs_server *s);
/* Stops and joins every thread the scheduler started. */
void fs_sched_stop(struct fs_server *s);
/* Frees the queues and epolls (after fs_sched_stop, or a failed start). */
void fs_sched_destroy(struct fs_server *s);

/* --- stats.c ------------------------------------------------------------------ */

void fs_stats_print(struct fs_server *s, FILE *out);
int fs_stats_write_json(struct fs_server *s, const char *path);

/* --- load.c ------------------------------------------------------------------- */

/* The --client mode: argv after "--client". Returns the exit status. */
int fs_load_main(int argc, char **argv);

#endif
