/* libmarker.so: a second preload library for the LD_PRELOAD tests; the
 * program looks its symbol up to see that it was loaded. */
int convoy_test_marker = 1;
