/* Output to a file: redirects stdout to the path given and prints N bytes
 * through stdio (lines of 'x'), locking a mutex between lines; exits 0 and
 * leaves the last buffer to the C library's flush at exit. */
#include "progs.h"

pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc != 3 || !freopen(argv[1], "w", stdout))
		return 2;
	long n = atol(argv[2]);
	for (long i = 0; i < n; i += 100) {
		long len = n - i < 100 ? n - i : 100;
		printf("%.*s\n", (int)len - 1, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		pthread_mutex_lock(&fill_lock);
		pthread_mutex_unlock(&fill_lock);
	}
	return 0;
}
