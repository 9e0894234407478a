package rueidisstore

import "github.com/redis/rueidis"

// ClientOption returns rueidis options for the nodes at addrs (a server, or
// any nodes of a cluster) that suit the store; change them as needed.
// AlwaysPipelining sends every command through the pipeline's background
// reader, which notices at once when a server closes the connection (a
// restart, a failover), so the next call dials anew instead of failing on
// the dead connection; DisableCache, as the store reads nothing a local
// cache could serve.
func ClientOption(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: addrs, AlwaysPipelining: true, DisableCache: true}
}
