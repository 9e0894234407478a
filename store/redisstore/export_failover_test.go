package redisstore

// WithoutSlotReload turns off the slot-map reloads the store asks of a cluster
// client after a failure, until restore is called: TestClusterFailover then
// measures go-redis on its own, as before the store asked for them.
func WithoutSlotReload() (restore func()) {
	noSlotReload.Store(true)
	return func() { noSlotReload.Store(false) }
}
