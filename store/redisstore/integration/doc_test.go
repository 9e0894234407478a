// Package integration_test runs the kit's HTTP pipeline (ratekit.Middleware,
// lockouts, levels) over real Redis: standalone, cluster, and a Redis that is
// down or hung.
package integration_test
