/* sched.c — the five schedulers: which thread serves a ready connection.
 *
 * A unit of work is a connection whose epoll registration fired (it is
 * readable, or writable after a blocked send), claimed by conn.c's protocol.
 * Serving it answers every complete request it holds, then re-arms it.
 *
 *   rr         One thread accepts and waits in one epoll for every
 *              connection; each ready connection goes round robin into a
 *              worker's queue: workpool's mutex FIFO (wp__fifo) with a
 *              condition variable the worker sleeps on. Seed 004's baseline:
 *              every request crosses the single dispatcher and a mutex.
 *   rs/lqs/as  One thread accepts and spreads new connections round robin
 *              over the workers' epolls (a connection's events always come to
 *              its worker). A worker pushes its ready connections onto its
 *              own Chase-Lev deque (workpool's wp__deque) and pops from the
 *              bottom; with nothing to do it steals the oldest from the top
 *              of another worker's deque:
 *                rs   a random victim, up to workers - 1 tries per round;
 *                lqs  reads every deque's length, steals from the longest;
 *                as   random victims, but the number of steal rounds an
 *                     idle worker makes before it sleeps follows its moving
 *                     p99: doubled while the p99 is above --target-p99-us,
 *                     halved while below.
 *              A worker that leaves two or more connections on its deque
 *              while others sleep wakes one of them (an eventfd every worker
 *              epoll holds with EPOLLEXCLUSIVE).
 *   reuseport  No accept thread: every worker has its own SO_REUSEPORT
 *              listening socket in its own epoll and serves what it accepts;
 *              no queues shared at all.
 */
#include "fileserver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const sched_names[FS_SCHED_COUNT] = {
#define FS__SCHED_NAME(name, text, what) text,
	FS_SCHED_MAP(FS__SCHED_NAME)
#undef FS__SCHED_NAME
};

const char *fs_sched_name(fs_sched s)
{
	return (unsigned)s < FS_SCHED_COUNT ? sched_names[s] : NULL;
}

int fs_sched_parse(const char *name, fs_sched *out)
{
	for (unsigned i = 0; i < FS_SCHED_COUNT; i++)
		if (strcmp(name, sched_names[i]) == 0) {
			*out = (fs_sched)i;
			return 0;
		}
	return -EINVAL;
}

/* epoll_event.data.ptr of the descriptors that are not connections. */
static char tag_listen, tag_stop, tag_steal;

/* Idle stealing workers sleep at most this long (a lost wake-up hint costs
 * at most this much latency, never a request). */
#define FS_IDLE_SLEEP_MS 100
/* Adaptive stealing: requests per p99 window, and the range of rounds. */
#define FS_AS_WINDOW 256
#define FS_AS_ROUNDS_MAX 64

static int epoll_add(int epfd, int fd, uint32_t events, void *tag)
{
	struct epoll_event ev = { .events = events, .data.ptr = tag };
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* The claimer notes when the work became ready (latency starts here), unless
 * a response is still being written: its request started earlier. */
static void mark_ready(struct fs_conn *c)
{
	if (!c->hdr_len)
		c->ready_ns = fs_now_ns();
}

/* Serves c until it waits or closes; serves again when an event came in
 * while it was busy. */
static void run_conn(struct fs_server *s, struct fs_worker *w, struct fs_conn *c)
{
	while (fs_http_serve(s, w, c) && fs_conn_release(s, c))
		mark_ready(c);
}

/* Accepts every pending connection on lfd into epfd_fixed or, when it is
 * negative, into the next epoll in round-robin order (*next). */
static void accept_all(struct fs_server *s, int lfd, int epfd_fixed, unsigned *next)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;     /* EAGAIN, or EMFILE & co: retried at the next edge */
		}
		int epfd = epfd_fixed;
		if (epfd < 0) {
			epfd = s->cfg.sched == FS_SCHED_RR
			        ? s->accept_epfd : s->workers[*next % s->cfg.workers].epfd;
			++*next;
		}
		fs_conn_accept(s, fd, epfd);
	}
}

/* --- rr ------------------------------------------------------------------------ */

static struct wp__ctr queue_ctr(struct fs_worker *w)
{
	return (struct wp__ctr){ .p = &w->queue_contended, .shared = true };
}

static void *rr_dispatcher(void *arg)
{
	struct fs_server *s = arg;
	struct epoll_event evs[256];
	unsigned next_conn = 0, next_worker = 0;
	for (;;) {
		int n = epoll_wait(s->accept_epfd, evs, 256, -1);
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;
			if (p == &tag_stop)
				return NULL;
			if (p == &tag_listen) {
				accept_all(s, s->listen_fd, -1, &next_conn);
				continue;
			}
			struct fs_conn *c = p;
			if (!fs_conn_claim(c))
				continue;
			mark_ready(c);
			struct fs_worker *w = &s->workers[next_worker++ % s->cfg.workers];
			wp_task t = { .fn = NULL, .arg = c };
			struct wp__src src = { .tasks = &t };
			if (wp__fifo_push(&w->queue, &src, 0, 1, 1, queue_ctr(w)) != 0) {
				fs_conn_close(s, c);   /* out of memory: drop this one */
				continue;
			}
			/* The push took the queue lock after any worker that saw the
			 * queue empty began its wait, so this signal reaches it. */
			pthread_cond_signal(&w->queue_cond);
		}
	}
}

static void *rr_worker(void *arg)
{
	struct fs_worker *w = arg;
	struct fs_server *s = w->server;
	for (;;) {
		wp_task t;
		if (wp__fifo_pop(&w->queue, &t, queue_ctr(w))) {
			run_conn(s, w, t.arg);
			continue;
		}
		wp__lock_counted(&w->queue.lock, queue_ctr(w));
		while (wp__fifo_peek_len(&w->queue) == 0 && !atomic_load(&s->stopping))
			pthread_cond_wait(&w->queue_cond, &w->queue.lock);
		wp__unlock(&w->queue.lock);
		if (atomic_load(&s->stopping))
			return NULL;
	}
}

/* --- accept thread of the stealing schedulers ------------------------------------ */

static void *spread_acceptor(void *arg)
{
	struct fs_server *s = arg;
	struct epoll_event evs[8];
	unsigned next = 0;
	for (;;) {
		int n = epoll_wait(s->accept_epfd, evs, 8, -1);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &tag_stop)
				return NULL;
			accept_all(s, s->listen_fd, -1, &next);
		}
	}
}

/* --- deques: rs, lqs, as, reuseport ---------------------------------------------- */

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static bool steal_from(struct fs_worker *thief, struct fs_worker *victim, wp_task *out)
{
	thief->steal_attempts++;
	int r = wp__deque_steal_thief(&victim->deque, out, NULL);
	if (r == WP__CL_LOST)
		atomic_fetch_add_explicit(&victim->cas_failed, 1, memory_order_relaxed);
	if (r == WP__CL_GOT)
		thief->steals++;
	return r == WP__CL_GOT;
}

static bool steal_random(struct fs_server *s, struct fs_worker *w, wp_task *out)
{
	unsigned n = s->cfg.workers;
	for (unsigned k = 1; k < n; k++) {
		unsigned v = (w->index + 1 + (unsigned)(xorshift(&w->rng) % (n - 1))) % n;
		if (steal_from(w, &s->workers[v], out))
			return true;
	}
	return false;
}

static bool steal_longest(struct fs_server *s, struct fs_worker *w, wp_task *out)
{
	struct fs_worker *best = NULL;
	size_t best_len = 0;
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		if (i == w->index)
			continue;
		size_t len = wp__deque_peek_len(&s->workers[i].deque);
		if (len > best_len) {
			best_len = len;
			best = &s->workers[i];
		}
	}
	return best && steal_from(w, best, out);
}

/* Adaptive stealing's controller, run every FS_AS_WINDOW requests. */
static void adapt(struct fs_server *s, struct fs_worker *w)
{
	if (w->window.count < FS_AS_WINDOW)
		return;
	uint64_t p99 = fs_hist_quantile(&w->window, 0.99);
	memset(&w->window, 0, sizeof w->window);
	w->p99_avg_ns = w->p99_avg_ns ? (3 * w->p99_avg_ns + p99) / 4 : p99;
	if (w->p99_avg_ns > s->cfg.target_p99_ns) {
		if (w->steal_rounds < FS_AS_ROUNDS_MAX)
			w->steal_rounds *= 2;
	} else if (w->steal_rounds > 1) {
		w->steal_rounds /= 2;
	}
}

static bool try_steal(struct fs_server *s, struct fs_worker *w, wp_task *out)
{
	if (s->cfg.workers < 2)
		return false;
	switch (s->cfg.sched) {
	case FS_SCHED_RS:
		return steal_random(s, w, out);
	case FS_SCHED_LQS:
		return steal_longest(s, w, out);
	case FS_SCHED_AS:
		for (unsigned r = 0; r < w->steal_rounds; r++)
			if (steal_random(s, w, out))
				return true;
		return false;
	default:
		return false;
	}
}

/* Waits up to timeout_ms for events on w's epoll; claims ready connections
 * onto w's deque. Returns -1 when the server stops, else how many it pushed. */
static int poll_events(struct fs_server *s, struct fs_worker *w, int timeout_ms)
{
	struct epoll_event evs[64];
	int n = epoll_wait(w->epfd, evs, 64, timeout_ms), pushed = 0;
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &tag_stop)
			return -1;
		if (p == &tag_steal)
			continue;       /* only a wake-up */
		if (p == &tag_listen) {
			accept_all(s, w->listen_fd, w->epfd, NULL);
			continue;
		}
		struct fs_conn *c = p;
		if (!fs_conn_claim(c))
			continue;
		mark_ready(c);
		if (wp__deque_push_owner(&w->deque, (wp_task){ .fn = NULL, .arg = c }) != 0) {
			fs_conn_close(s, c);
			continue;
		}
		pushed++;
	}
	if (pushed >= 2 && s->cfg.sched != FS_SCHED_REUSEPORT &&
	    atomic_load_explicit(&s->sleepers, memory_order_relaxed) > 0) {
		uint64_t one = 1;
		(void)!write(s->steal_fd, &one, sizeof one);
	}
	return pushed;
}

static void *deque_worker(void *arg)
{
	struct fs_worker *w = arg;
	struct fs_server *s = w->server;
	for (;;) {
		wp_task t;
		int r = wp__deque_pop_owner(&w->deque, &t);
		if (r == WP__CL_LOST)
			atomic_fetch_add_explicit(&w->cas_failed, 1, memory_order_relaxed);
		if (r == WP__CL_GOT) {
			run_conn(s, w, t.arg);
			if (s->cfg.sched == FS_SCHED_AS)
				adapt(s, w);
			continue;
		}
		/* Poll only once the deque is empty: the owner pops the newest
		 * first, so polling mid-batch would keep pushing fresh
		 * connections above older ones and starve those (the p99 of a
		 * single worker under wrk was 130-190 ms that way, against
		 * 6 ms for the FIFO of rr). */
		int pushed = poll_events(s, w, 0);
		if (pushed < 0)
			return NULL;
		if (pushed > 0 || wp__deque_peek_len(&w->deque) > 0)
			continue;
		if (try_steal(s, w, &t)) {
			run_conn(s, w, t.arg);
			continue;
		}
		atomic_fetch_add(&s->sleepers, 1);
		pushed = poll_events(s, w, FS_IDLE_SLEEP_MS);
		atomic_fetch_sub(&s->sleepers, 1);
		if (pushed < 0)
			return NULL;
	}
}

/* --- start and stop --------------------------------------------------------------- */

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg, const char *name)
{
	int err = pthread_create(t, NULL, fn, arg);
	if (err)
		return -err;
	pthread_setname_np(*t, name);
	return 0;
}

int fs_sched_start(struct fs_server *s)
{
	fs_sched kind = s->cfg.sched;
	int err;
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		struct fs_worker *w = &s->workers[i];
		w->server = s;
		w->index = i;
		w->rng = 0x9e3779b97f4a7c15ull * (i + 1);
		w->steal_rounds = 1;
		if (kind == FS_SCHED_RR) {
			if ((err = wp__fifo_init(&w->queue, 64)) != 0)
				return err;
			wp__cond_init_monotonic(&w->queue_cond);
			continue;
		}
		if ((err = wp__deque_init(&w->deque, 256, 0)) != 0)
			return err;
		/* Every queued connection stays stealable (no private batch). */
		w->deque.own.take_max = 1;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0)
			return -errno;
		if ((err = epoll_add(w->epfd, s->stop_fd, EPOLLIN, &tag_stop)) != 0)
			return err;
		if (kind == FS_SCHED_REUSEPORT)
			err = epoll_add(w->epfd, w->listen_fd, EPOLLIN, &tag_listen);
		else
			err = epoll_add(w->epfd, s->steal_fd,
			                EPOLLIN | EPOLLET | EPOLLEXCLUSIVE, &tag_steal);
		if (err)
			return err;
	}
	if (kind != FS_SCHED_REUSEPORT) {
		s->accept_epfd = epoll_create1(EPOLL_CLOEXEC);
		if (s->accept_epfd < 0)
			return -errno;
		if ((err = epoll_add(s->accept_epfd, s->stop_fd, EPOLLIN, &tag_stop)) ||
		    (err = epoll_add(s->accept_epfd, s->listen_fd, EPOLLIN, &tag_listen)))
			return err;
	}
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		char name[16];
		snprintf(name, sizeof name, "fs-%s-%u", fs_sched_name(kind), i);
		if ((err = start_thread(&s->workers[i].thread,
		                        kind == FS_SCHED_RR ? rr_worker : deque_worker,
		                        &s->workers[i], name)) != 0)
			return err;
	}
	if (kind != FS_SCHED_REUSEPORT &&
	    (err = start_thread(&s->accept_thread,
	                        kind == FS_SCHED_RR ? rr_dispatcher : spread_acceptor, s,
	                        kind == FS_SCHED_RR ? "fs-dispatch" : "fs-accept")) != 0)
		return err;
	return 0;
}

void fs_sched_stop(struct fs_server *s)
{
	atomic_store(&s->stopping, true);
	uint64_t one = 1;
	(void)!write(s->stop_fd, &one, sizeof one);
	if (s->cfg.sched == FS_SCHED_RR)
		for (unsigned i = 0; i < s->cfg.workers; i++) {
			struct fs_worker *w = &s->workers[i];
			wp__lock(&w->queue.lock);
			pthread_cond_broadcast(&w->queue_cond);
			wp__unlock(&w->queue.lock);
		}
	for (unsigned i = 0; i < s->cfg.workers; i++)
		if (s->workers[i].thread)
			pthread_join(s->workers[i].thread, NULL);
	if (s->accept_thread)
		pthread_join(s->accept_thread, NULL);
}

void fs_sched_destroy(struct fs_server *s)
{
	for (unsigned i = 0; i < s->cfg.workers; i++) {
		struct fs_worker *w = &s->workers[i];
		if (s->cfg.sched == FS_SCHED_RR) {
			if (w->queue.ring.slots) {
				wp__fifo_destroy(&w->queue);
				pthread_cond_destroy(&w->queue_cond);
			}
		} else if (atomic_load(&w->deque.buf)) {
			wp__deque_destroy(&w->deque);
		}
		if (w->epfd >= 0)
			close(w->epfd);
	}
	if (s->accept_epfd >= 0)
		close(s->accept_epfd);
}
