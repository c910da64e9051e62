/* order_two_callers: the classic lock-order inversion. transfer(from, to)
 * locks from, then to; one thread reaches it through pay_rent(a, b),
 * another through refund(b, a). The two accounts' locks are made at one
 * site and both edges are taken at the same two call sites, so only the
 * callers tell the edges apart: the cycle's report must show pay_rent
 * on one edge and refund on the other (a shim that shared one edge's
 * stacks with the other's, keyed by sites alone, showed pay_rent twice). */
#include "progs.h"

struct account {
	pthread_mutex_t lock;
	long balance;
};

static struct account accounts[2];
static volatile int naccounts = 2;   /* read each time round: the loop is not unrolled */
static volatile int payments;   /* counted after each transfer: no tail call hides its caller */

static __attribute__((noinline)) void transfer(struct account *from, struct account *to, long amount)
{
	MUST(pthread_mutex_lock(&from->lock));
	MUST(pthread_mutex_lock(&to->lock));
	from->balance -= amount;
	to->balance += amount;
	MUST(pthread_mutex_unlock(&to->lock));
	MUST(pthread_mutex_unlock(&from->lock));
}

static __attribute__((noinline)) void pay_rent(void)
{
	transfer(&accounts[0], &accounts[1], 10);
	payments++;
}

static __attribute__((noinline)) void refund(void)
{
	transfer(&accounts[1], &accounts[0], 5);
	payments++;
}

static __attribute__((noinline)) void open_account(struct account *a)
{
	MUST(pthread_mutex_init(&a->lock, NULL));
}

static void *tenant(void *arg)
{
	pay_rent();
	return arg;
}

static void *landlord(void *arg)
{
	refund();
	return arg;
}

int main(void)
{
	for (int i = 0; i < naccounts; i++)   /* one call site, one init stack for both */
		open_account(&accounts[i]);
	pthread_t th;   /* one after the other: the order is inverted, nothing hangs */
	MUST(pthread_create(&th, NULL, tenant, NULL));
	MUST(pthread_join(th, NULL));
	MUST(pthread_create(&th, NULL, landlord, NULL));
	MUST(pthread_join(th, NULL));
	printf("balances %ld %ld\n", accounts[0].balance, accounts[1].balance);
	return 0;
}
