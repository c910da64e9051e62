# Tests for the shim and the analyzer (tests/shim/, programs in tests/progs/).
