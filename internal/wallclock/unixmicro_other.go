//go:build !(linux && amd64)

package wallclock

import "time"

// UnixMicro returns the current Unix time in microseconds.
func UnixMicro() int64 { return time.Now().UnixMicro() }
