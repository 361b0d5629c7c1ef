// Preloaded when BENCH_PROFILE=1: Node writes a --cpu-prof profile only when the process
// exits by itself, and the service re-raises SIGTERM once it has shut down, so the
// profiled process exits here instead.
process.once('SIGTERM', () => process.exit(0));
