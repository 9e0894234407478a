package rueidisstore

import "github.com/redis/rueidis"

// ClientOption returns rueidis options for the nodes at addrs (a server, or
// any nodes of a cluster) that suit the store; change them as needed:
//
//   - AlwaysPipelining: every command goes through the pipeline's background
//     reader, which notices at once when a server closes the connection (a
//     restart, a failover): the next call dials anew instead of writing to
//     the dead connection and failing. rueidis's client-side cache, which the
//     store does not use, has the same effect; without either, a connection
//     used by one caller at a time reads synchronously.
//   - DisableCache: the store reads nothing that a local cache could serve.
//
// The store's calls are never retried by rueidis whatever the options (see
// the package doc).
func ClientOption(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: addrs, AlwaysPipelining: true, DisableCache: true}
}
