# make bench-shim: the shim's overhead, native and preloaded side by side.
.PHONY: bench-shim
bench-shim:
