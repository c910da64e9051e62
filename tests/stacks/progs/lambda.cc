// lambda.cc — a std::mutex locked through std::lock_guard inside a lambda
// that a std::thread runs, built -O2: the lock call is inlined several deep.
#include <array>
#include <cstdio>
#include <mutex>
#include <thread>

#include "stacks_progs.h"

std::mutex table_mutex;

struct Account {
	long balance = 0;
	std::mutex m;
};

namespace bank {
std::array<Account, 3> shards;   // a C++ member path: bank::shards[2].m
}

int main()
{
	long total = 0;
	auto deposit = [&](long amount) {
		std::lock_guard<std::mutex> guard(table_mutex);   // LAMBDA_LINE
		total += amount;
	};
	table_mutex.lock();
	std::thread t(deposit, 5);
	wait_for_waiter(table_mutex.native_handle());
	table_mutex.unlock();
	t.join();

	Account *a = new Account;
	a->m.lock();   // ACCOUNT_FIRST_LINE
	std::thread u([a] {
		std::lock_guard<std::mutex> guard(a->m);   // ACCOUNT_LINE
		a->balance += 1;
	});
	wait_for_waiter(a->m.native_handle());
	a->m.unlock();
	u.join();
	bank::shards[2].m.lock();
	std::thread v([] {
		std::lock_guard<std::mutex> guard(bank::shards[2].m);
		bank::shards[2].balance++;
	});
	wait_for_waiter(bank::shards[2].m.native_handle());
	bank::shards[2].m.unlock();
	v.join();
	std::printf("lambda: done %ld %ld\n", total, a->balance);
	delete a;
	return 0;
}
