//go:build capture_testhook

package capture

// SetBeforeForceGC makes Take call f just before the first collection it
// induces. It exists only with the build tag capture_testhook, for the
// profiler of the package's integration tests (testdata/capprof), which
// uses it to let the runtime restore the start-up mask inside a Take.
func SetBeforeForceGC(f func()) { beforeForceGC = f }
