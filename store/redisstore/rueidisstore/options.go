package rueidisstore

import "github.com/redis/rueidis"

// ClientOption returns rueidis options for the nodes at addrs (a server, or
// any nodes of a cluster) that suit the store; change them as needed.
// AlwaysPipelining notices at once a connection the server closed (a
// restart, a failover), so the next call dials anew; the store reads nothing
// a client-side cache could serve.
func ClientOption(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: addrs, AlwaysPipelining: true, DisableCache: true}
}
