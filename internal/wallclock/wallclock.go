// Package wallclock reads the wall clock for the kit's per-request paths,
// which need the Unix time and nothing else: time.Now also reads the
// monotonic clock, and on linux/amd64 the two readings cost twice one.
package wallclock
