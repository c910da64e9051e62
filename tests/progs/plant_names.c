/* A hostile directory: before doing its work (locking a mutex 100 times),
 * the program puts things where a profiler might write a file for this
 * process, convoy-<comm>-<pid>.convoy and .convoy.tmp in DIR:
 *   link   a symbolic link to DIR/target at the first, a FIFO at the second
 *   file   a regular file holding "planted" at the first
 * It prints what it planted and exits 0. */
#include <sys/stat.h>

#include "progs.h"

pthread_mutex_t plant_lock = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	const char *dir = argv[1], *kind = argv[2];
	char name[4096], target[4096];
	snprintf(name, sizeof(name), "%s/convoy-plant_names-%d.convoy", dir, (int)getpid());
	snprintf(target, sizeof(target), "%s/target", dir);
	if (strcmp(kind, "link") == 0) {
		MUST(symlink(target, name) ? errno : 0);
		strcat(name, ".tmp");
		MUST(mkfifo(name, 0666) ? errno : 0);
	} else if (strcmp(kind, "file") == 0) {
		FILE *f = fopen(name, "w");
		MUST(f ? 0 : errno);
		fputs("planted", f);
		MUST(fclose(f) ? errno : 0);
	} else {
		return 2;
	}
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&plant_lock);
		pthread_mutex_unlock(&plant_lock);
	}
	printf("planted %s\n", kind);
	return 0;
}
