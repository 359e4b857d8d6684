// Filled in by the fuzzer work.
