package rueidisstore

import "context"

// ProbeSubjects returns the subjects Ping decides about.
func ProbeSubjects(ctx context.Context, s *Store) []string { return s.probeSubjects(ctx) }
