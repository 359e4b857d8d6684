// Filled in by the benchmark work.
