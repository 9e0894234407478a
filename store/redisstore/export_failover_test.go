package redisstore

// WithoutSlotReload turns off the slot-map reloads the store asks of a cluster
// client after a failure: TestClusterFailover then measures go-redis on its
// own, as before the store asked for them.
func WithoutSlotReload() Option {
	return optionFunc(func(s *Store) { s.noSlotReload = true })
}
