/* replug DIR TMP: loads DIR/libreplug_v1.so as TMP/plugin.so, calls its
 * a (a pthread_mutex_init: the shim captures the init's stack), closes it;
 * then the same with libreplug_v2.so copied to the same path. Prints where
 * each was loaded and whether the second came where the first was (the
 * case replug_v1.S describes). Exit 0 when both calls returned. */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* src copied to dst, through a new file renamed over it: the loader sees
 * a new file at the old path. */
static void copy_to(const char *src, const char *dst)
{
	char tmp[4096], buf[65536];
	snprintf(tmp, sizeof tmp, "%s.new", dst);
	int in = open(src, O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	if (in < 0 || out < 0) {
		perror(src);
		exit(2);
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			perror(tmp);
			exit(2);
		}
	close(in);
	if (close(out) || rename(tmp, dst)) {
		perror(dst);
		exit(2);
	}
}

static unsigned long load_and_call(const char *dir, const char *version, const char *path)
{
	char src[4096];
	snprintf(src, sizeof src, "%s/libreplug_%s.so", dir, version);
	copy_to(src, path);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void (*a)(void) = h ? (void (*)(void))dlsym(h, "a") : NULL;
	struct link_map *lm = NULL;
	if (!a || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0) {
		fprintf(stderr, "%s: %s\n", src, dlerror());
		exit(2);
	}
	unsigned long at = (unsigned long)lm->l_addr;
	a();
	printf("%s: a() returned\n", version);
	dlclose(h);
	return at;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: replug DIR TMP\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/plugin.so", argv[2]);
	unsigned long first = load_and_call(argv[1], "v1", path);
	unsigned long second = load_and_call(argv[1], "v2", path);
	printf("v2 loaded %s v1\n", first == second ? "where" : "elsewhere than");
	return 0;
}
