// shared_mutex — C++17 std::shared_mutex (libstdc++ wraps pthread_rwlock_t):
// the same choreography as rwlock_sides.c with std::thread, std::shared_lock
// and std::unique_lock. Expected: read acquisitions 1,002, write 101, one
// read wait, one write wait behind readers.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "prim_util.h"

std::shared_mutex settings_lock;
static long settings;
static std::atomic<pid_t> writer_tid, main_tid;
static std::atomic<int> writer_about_to_lock, writer_holds, main_about_to_read;

int main()
{
	main_tid = gettid();
	for (int i = 0; i < 1000; i++) {
		std::shared_lock<std::shared_mutex> r(settings_lock);
		(void)settings;
	}
	for (int i = 0; i < 100; i++) {
		std::unique_lock<std::shared_mutex> w(settings_lock);
		settings++;
	}
	settings_lock.lock_shared();
	std::thread writer([] {
		writer_tid = gettid();
		writer_about_to_lock = 1;
		settings_lock.lock();              // behind main's shared lock
		settings += 100;
		writer_holds = 1;
		while (!main_about_to_read)
			sched_yield();
		prim_wait_blocked(main_tid);
		settings_lock.unlock();
	});
	while (!writer_about_to_lock)
		sched_yield();
	prim_wait_blocked(writer_tid);
	settings_lock.unlock_shared();
	while (!writer_holds)
		sched_yield();
	main_about_to_read = 1;
	long seen;
	{
		std::shared_lock<std::shared_mutex> r(settings_lock);   // waits for the writer
		seen = settings;
	}
	writer.join();
	std::printf("settings=%ld seen=%ld\n", settings, seen);
	return 0;
}
