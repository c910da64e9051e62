/* inline_chain.c — a wait under 80 levels of always-inlined functions,
 * each with a block of its own: every one of them is a frame of the wait's
 * stack, innermost inline_0 (the analyzer follows the chain of inlined
 * scopes as deep as it goes; a fixed 64 once named the innermost frame
 * after the 64th with the innermost's line). Built with -O1 like the
 * others: the inlining is forced. */
#include "stacks_progs.h"

static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int sink;

static inline __attribute__((always_inline)) void inline_0(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

#define LEVEL(n, inner)                                                                  \
	static inline __attribute__((always_inline)) void inline_##n(pthread_mutex_t *m) \
	{                                                                                \
		{                                                                        \
			volatile int here = n;                                           \
			sink += here;                                                    \
			inner(m);                                                        \
		}                                                                        \
	}
LEVEL(1, inline_0)
LEVEL(2, inline_1)
LEVEL(3, inline_2)
LEVEL(4, inline_3)
LEVEL(5, inline_4)
LEVEL(6, inline_5)
LEVEL(7, inline_6)
LEVEL(8, inline_7)
LEVEL(9, inline_8)
LEVEL(10, inline_9)
LEVEL(11, inline_10)
LEVEL(12, inline_11)
LEVEL(13, inline_12)
LEVEL(14, inline_13)
LEVEL(15, inline_14)
LEVEL(16, inline_15)
LEVEL(17, inline_16)
LEVEL(18, inline_17)
LEVEL(19, inline_18)
LEVEL(20, inline_19)
LEVEL(21, inline_20)
LEVEL(22, inline_21)
LEVEL(23, inline_22)
LEVEL(24, inline_23)
LEVEL(25, inline_24)
LEVEL(26, inline_25)
LEVEL(27, inline_26)
LEVEL(28, inline_27)
LEVEL(29, inline_28)
LEVEL(30, inline_29)
LEVEL(31, inline_30)
LEVEL(32, inline_31)
LEVEL(33, inline_32)
LEVEL(34, inline_33)
LEVEL(35, inline_34)
LEVEL(36, inline_35)
LEVEL(37, inline_36)
LEVEL(38, inline_37)
LEVEL(39, inline_38)
LEVEL(40, inline_39)
LEVEL(41, inline_40)
LEVEL(42, inline_41)
LEVEL(43, inline_42)
LEVEL(44, inline_43)
LEVEL(45, inline_44)
LEVEL(46, inline_45)
LEVEL(47, inline_46)
LEVEL(48, inline_47)
LEVEL(49, inline_48)
LEVEL(50, inline_49)
LEVEL(51, inline_50)
LEVEL(52, inline_51)
LEVEL(53, inline_52)
LEVEL(54, inline_53)
LEVEL(55, inline_54)
LEVEL(56, inline_55)
LEVEL(57, inline_56)
LEVEL(58, inline_57)
LEVEL(59, inline_58)
LEVEL(60, inline_59)
LEVEL(61, inline_60)
LEVEL(62, inline_61)
LEVEL(63, inline_62)
LEVEL(64, inline_63)
LEVEL(65, inline_64)
LEVEL(66, inline_65)
LEVEL(67, inline_66)
LEVEL(68, inline_67)
LEVEL(69, inline_68)
LEVEL(70, inline_69)
LEVEL(71, inline_70)
LEVEL(72, inline_71)
LEVEL(73, inline_72)
LEVEL(74, inline_73)
LEVEL(75, inline_74)
LEVEL(76, inline_75)
LEVEL(77, inline_76)
LEVEL(78, inline_77)
LEVEL(79, inline_78)

static void *worker(void *arg)
{
	inline_79(arg);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pthread_mutex_lock(&chain_lock);
	MUST(pthread_create(&th, NULL, worker, &chain_lock));
	wait_for_waiter(&chain_lock);
	pthread_mutex_unlock(&chain_lock);
	MUST(pthread_join(th, NULL));
	puts("inline_chain: done");
	return 0;
}
