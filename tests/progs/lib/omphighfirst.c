/* libomphighfirst.so: takes the address libomphigh.so is linked at
 * (tests.mk), so that that one is loaded lower. */
int omp_high_first(void)
{
	return 1;
}
