/* A daemon's descriptors: closes 0-2, puts /dev/null on 0 and 1 and opens
 * the data file given (it becomes fd 2), writes one line to it, locks a
 * mutex and exits 0 without closing it. */
#include <fcntl.h>

#include "progs.h"

pthread_mutex_t daemon_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	for (int fd = 0; fd <= 2; fd++)
		close(fd);
	if (open("/dev/null", O_RDONLY) != 0 || open("/dev/null", O_WRONLY) != 1)
		return 98;
	int data = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (data != 2)
		return 97;
	static const char line[] = "data line\n";
	if (write(data, line, sizeof(line) - 1) != sizeof(line) - 1)
		return 96;
	pthread_mutex_lock(&daemon_lock);
	pthread_mutex_unlock(&daemon_lock);
	return 0;
}
