// std::mutex, std::condition_variable and std::thread: two threads lock
// g_mutex 10,000 times each (20,000 in all); g_cv is notified 100 times with
// nobody waiting, then 50 times in a handshake in which the waiter is known
// to be inside wait().
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

std::mutex g_mutex;
std::mutex g_cv_mutex;
std::condition_variable g_cv;
static long counter;
static int waiting_round = -1, go_round = -1;

static void locker()
{
	for (int i = 0; i < 10000; i++) {
		std::lock_guard<std::mutex> g(g_mutex);
		counter++;
	}
}

static void waiter()
{
	for (int i = 0; i < 50; i++) {
		std::unique_lock<std::mutex> l(g_cv_mutex);
		waiting_round = i;
		g_cv.wait(l, [i] { return go_round == i; });
	}
}

int main()
{
	for (int i = 0; i < 100; i++)
		g_cv.notify_one();
	std::thread a(locker), b(locker), w(waiter);
	for (int i = 0; i < 50; i++) {
		for (;;) {
			std::unique_lock<std::mutex> l(g_cv_mutex);
			if (waiting_round == i) {
				go_round = i;
				g_cv.notify_one();
				break;
			}
			l.unlock();
			std::this_thread::yield();
		}
	}
	a.join();
	b.join();
	w.join();
	std::printf("counter %ld\n", counter);
	return counter == 20000 ? 0 : 1;
}
