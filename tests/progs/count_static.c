/* A file-scope static mutex (a local symbol) and a mutex inside a global
 * struct: named "table_lock" and "pool.lock" (symbol, then the member DWARF
 * names at offset 8). */
#include "progs.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct pool {
	long items;
	pthread_mutex_t lock;    /* offset 8 */
} pool = { 0, PTHREAD_MUTEX_INITIALIZER };

int main(void)
{
	for (int i = 0; i < 777; i++) {
		pthread_mutex_lock(&table_lock);
		pthread_mutex_unlock(&table_lock);
	}
	for (int i = 0; i < 333; i++) {
		pthread_mutex_lock(&pool.lock);
		pool.items++;
		pthread_mutex_unlock(&pool.lock);
	}
	printf("lock offset %zu\n", __builtin_offsetof(struct pool, lock));
	return 0;
}
