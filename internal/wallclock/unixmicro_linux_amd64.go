//go:build linux && amd64

package wallclock

import (
	"syscall"
	"time"
)

// UnixMicro returns the current Unix time in microseconds, as
// time.Now().UnixMicro() does, from one reading of the wall clock
// (gettimeofday, through the vDSO).
func UnixMicro() int64 {
	var tv syscall.Timeval
	if syscall.Gettimeofday(&tv) != nil {
		return time.Now().UnixMicro()
	}
	return tv.Sec*1_000_000 + tv.Usec
}
