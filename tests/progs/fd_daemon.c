/* A daemon's descriptors: it closes every descriptor from 3 up, opens its
 * input (fd 3) and a log (fd 4), takes contended locks in two threads, then
 * copies the input to the log. The log must hold exactly the input, and the
 * descriptors it did not open must stay closed. argv[1]: input; argv[2]: log.
 * On x86-64 the locks are taken under a frame without unwind info, which an
 * unwinder can only follow by its frame pointer (libunwind then validates
 * each address it reads, through a pipe). */
#include <fcntl.h>
#include <sys/resource.h>

#include "progs.h"

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;

void locks(void);
void no_cfi(void);

__attribute__((noinline)) void locks(void)
{
	volatile long sum = 0;
	for (int i = 0; i < 20000; i++) {
		MUST(pthread_mutex_lock(&shared));
		for (int k = 0; k < 50; k++)
			sum++;
		MUST(pthread_mutex_unlock(&shared));
	}
}

#ifdef __x86_64__
/* no_cfi: a classic frame-pointer frame without CFI, calls locks. */
__asm__(".text\n"
	".globl no_cfi\n"
	".type no_cfi,@function\n"
	"no_cfi:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rbx\n"
	"	sub $8, %rsp\n"
	"	call locks\n"
	"	add $8, %rsp\n"
	"	pop %rbx\n"
	"	pop %rbp\n"
	"	ret\n"
	".size no_cfi, .-no_cfi\n");
#else
void no_cfi(void) { locks(); }
#endif

static void *work(void *arg)
{
	no_cfi();
	return NULL;
}

/* The lowest descriptor at or above 3 that is open, or -1. */
static int first_open_from_3(void)
{
	struct rlimit rl;
	MUST(getrlimit(RLIMIT_NOFILE, &rl));
	for (int fd = 3; fd < (int)rl.rlim_cur && fd < 65536; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			return fd;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	pthread_t first;
	MUST(pthread_create(&first, NULL, work, NULL));
	work(NULL);   /* contended: the shim captures stacks, whatever that opens */
	MUST(pthread_join(first, NULL));
	printf("first open descriptor from 3 before closing: %d\n", first_open_from_3());
	closefrom(3);
	int in = open(argv[1], O_RDONLY), log = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	printf("input fd %d, log fd %d\n", in, log);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		MUST(pthread_create(&th[i], NULL, work, NULL));
	for (int i = 0; i < 2; i++)
		MUST(pthread_join(th[i], NULL));
	char buf[4096];
	ssize_t n;
	long copied = 0;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(log, buf, (size_t)n) != n)
			return 98;
		copied += n;
	}
	close(in);
	close(log);
	printf("copied %ld bytes; first open descriptor from 3 after closing: %d\n", copied, first_open_from_3());
	return 0;
}
