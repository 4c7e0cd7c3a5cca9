package profiler

// CodePages is what ReleaseCodePages did, in bytes.
type CodePages struct {
	Library  string // the profiler library's file, as /proc/self/maps names it
	Resident int64  // resident in its read-only mappings before
	Released int64  // given back: pages holding the file's own bytes
	Kept     int64  // resident pages written since they were mapped, kept
}
