/* omp_old_nopie: libompold.so's OMP_1.0 nest locks in a program that is
 * not position-independent and exports nothing, linked by ld.bfd with a
 * GNU hash table only (tests.mk): such a table counts one symbol, and its
 * undefined ones were not seen, so the shim forwarded the OMP_1.0 calls
 * to OMP_3.0's, which wrote past the 8-byte lock (helper-135). Prints
 * "nest25 count 2 1 guard 11111111 22222222". */
#include "lib/ompold.c"

int main(void)
{
	return omp_plugin_run();
}
