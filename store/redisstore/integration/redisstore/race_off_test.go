//go:build !race

package redisstore_test

// raceDetector reports a test binary built with -race.
const raceDetector = false
