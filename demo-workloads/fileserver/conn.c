/* conn.c — the connection table and who may touch a connection.
 *
 * Every connection is registered in one epoll instance with EPOLLONESHOT, so
 * each readiness event is delivered once and the registration stays disarmed
 * until the connection's owner re-arms it. Ownership is the state word:
 *
 *   claim   (an event):  IDLE -> BUSY (the claimer owns it and serves it),
 *                        BUSY -> BUSY_AGAIN (the owner will serve once more)
 *   release (the owner): re-arm first, then BUSY -> IDLE; if it finds
 *                        BUSY_AGAIN, an event came in between: serve again
 *   sweep   (main):      IDLE -> BUSY for a connection past its deadline,
 *                        then close it
 *
 * The owner re-arms *before* giving up ownership, so epoll_ctl never runs on a
 * descriptor that another thread may have closed (and reused). An event that
 * fires between the re-arm and the release finds BUSY and leaves BUSY_AGAIN
 * behind, so no wake-up is lost.
 *
 * Slots are indexed by descriptor and never freed. A stale event (its
 * connection closed, the descriptor reused) therefore points at a valid slot:
 * at worst it claims the new connection, whose read finds nothing and which
 * is re-armed — harmless. A slot is marked FREE before its descriptor is
 * closed, because the accept path may reuse the number right after close().
 */
#include "fileserver.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

uint64_t fs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int fs_conns_init(struct fs_server *s)
{
	/* Each connection may hold a socket and a file being sent; the rest are
	 * listen sockets, epolls, eventfds and stdio. Raise the soft limit to
	 * fit if the hard limit allows; the table covers every descriptor the
	 * process can then have, so no accepted socket falls outside it. */
	size_t want = 2 * (size_t)s->cfg.max_conns + 2 * FS_MAX_WORKERS + 64;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -errno;
	if (rl.rlim_cur < want && rl.rlim_cur != RLIM_INFINITY) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
		                ? want : rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	s->nconns = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > want ? want
	                                                               : rl.rlim_cur;
	s->conns = calloc(s->nconns, sizeof *s->conns);
	if (!s->conns)
		return -ENOMEM;
	for (size_t i = 0; i < s->nconns; i++) {
		atomic_init(&s->conns[i].state, FS_FREE);
		s->conns[i].fd = -1;
		s->conns[i].file_fd = -1;
	}
	return 0;
}

void fs_conns_destroy(struct fs_server *s)
{
	for (size_t i = 0; i < s->nconns; i++)
		if (atomic_load(&s->conns[i].state) != FS_FREE)
			fs_conn_close(s, &s->conns[i]);
	free(s->conns);
	s->conns = NULL;
}

void fs_conn_accept(struct fs_server *s, int fd, int epfd)
{
	if ((size_t)fd >= s->nconns ||
	    atomic_fetch_add(&s->open_conns, 1) >= s->cfg.max_conns) {
		if ((size_t)fd < s->nconns)
			atomic_fetch_sub(&s->open_conns, 1);
		atomic_fetch_add_explicit(&s->refused_full, 1, memory_order_relaxed);
		fs_http_refuse_full(fd);
		close(fd);
		return;
	}
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct fs_conn *c = &s->conns[fd];
	c->fd = fd;
	c->epfd = epfd;
	c->len = 0;
	c->peer_eof = c->close_after = c->want_out = false;
	c->hdr_len = c->hdr_off = 0;
	c->file_fd = -1;
	c->file_off = c->file_end = 0;
	c->head_start_ns = c->idle_since_ns = fs_now_ns();
	atomic_store_explicit(&c->deadline_ns,
	                      c->head_start_ns + s->cfg.header_timeout_ms * 1000000ull,
	                      memory_order_relaxed);
	/* The acceptor owns the connection until it is registered: an IDLE
	 * slot that is not yet in epoll could be claimed by the sweeper or by
	 * a stale event for the slot's previous connection, whose release
	 * would then fail on the missing registration and close the socket
	 * under us. So: add it disarmed while BUSY, then release it like any
	 * owner (which arms it; an event that came meanwhile is re-raised by
	 * the re-arm, since epoll checks readiness then). */
	atomic_store_explicit(&c->state, FS_BUSY, memory_order_relaxed);
	struct epoll_event ev = { .events = EPOLLONESHOT, .data.ptr = c };
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		fs_conn_close(s, c);
		return;
	}
	while (fs_conn_release(s, c))
		;
}

bool fs_conn_claim(struct fs_conn *c)
{
	int st = atomic_load_explicit(&c->state, memory_order_acquire);
	for (;;) {
		int next;
		if (st == FS_IDLE)
			next = FS_BUSY;
		else if (st == FS_BUSY)
			next = FS_BUSY_AGAIN;
		else
			return false;   /* FREE (stale event) or already marked */
		/* acq_rel: the claimer sees the previous owner's writes to the
		 * connection (released by its BUSY -> IDLE). */
		if (atomic_compare_exchange_weak_explicit(&c->state, &st, next,
		                                          memory_order_acq_rel,
		                                          memory_order_acquire))
			return next == FS_BUSY;
	}
}

bool fs_conn_release(struct fs_server *s, struct fs_conn *c)
{
	struct epoll_event ev = {
		.events = (c->want_out ? EPOLLOUT : EPOLLIN) | EPOLLET |
		          EPOLLONESHOT | EPOLLRDHUP,
		.data.ptr = c,
	};
	if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
		fs_conn_close(s, c);
		return false;
	}
	int busy = FS_BUSY;
	if (atomic_compare_exchange_strong_explicit(&c->state, &busy, FS_IDLE,
	                                            memory_order_acq_rel,
	                                            memory_order_acquire))
		return false;
	/* BUSY_AGAIN: an event fired after the re-arm; it is ours to serve. */
	atomic_store_explicit(&c->state, FS_BUSY, memory_order_relaxed);
	return true;
}

void fs_conn_close(struct fs_server *s, struct fs_conn *c)
{
	int fd = c->fd;
	if (c->file_fd >= 0) {
		close(c->file_fd);
		c->file_fd = -1;
	}
	c->fd = -1;
	atomic_store_explicit(&c->state, FS_FREE, memory_order_release);
	atomic_fetch_sub(&s->open_conns, 1);
	/* Last: from here the accept path may hand this slot to a new socket. */
	close(fd);
}

void fs_conns_sweep(struct fs_server *s, uint64_t now)
{
	for (size_t i = 0; i < s->nconns; i++) {
		struct fs_conn *c = &s->conns[i];
		if (atomic_load_explicit(&c->state, memory_order_relaxed) != FS_IDLE ||
		    atomic_load_explicit(&c->deadline_ns, memory_order_relaxed) > now)
			continue;
		int idle = FS_IDLE;
		if (!atomic_compare_exchange_strong(&c->state, &idle, FS_BUSY))
			continue;
		/* Recheck under ownership: the owner may have moved the deadline
		 * just before it released. */
		if (atomic_load_explicit(&c->deadline_ns, memory_order_relaxed) > now) {
			/* Give it back. Re-arming a ready socket queues a new
			 * event, so one that came while we held it is not lost. */
			while (fs_conn_release(s, c))
				;
			continue;
		}
		atomic_fetch_add_explicit(&s->timed_out, 1, memory_order_relaxed);
		fs_http_timeout(c);
		/* Abortive close (RST): a client that stopped reading would keep
		 * our unsent data, and the socket, in the kernel for minutes. */
		struct linger hard = { .l_onoff = 1, .l_linger = 0 };
		(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
		fs_conn_close(s, c);
	}
}
