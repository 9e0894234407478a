// Command proxies shows the README's client-IP settings: which key function
// to use behind which proxies. Run it with -behind none, lb, cdn or hops.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/netip"
	"time"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/clientip"
	"github.com/ratekit/ratekit/store/memstore"
)

// cdnRanges are the CDN's published egress ranges (an example range here).
var cdnRanges = []netip.Prefix{netip.MustParsePrefix("173.245.48.0/20")}

func keyFunc(behind string) ratekit.KeyFunc {
	switch behind {
	case "lb": // load balancers at 10.0.0.0/8 append to X-Forwarded-For
		return ratekit.ByIP(clientip.TrustProxies(netip.MustParsePrefix("10.0.0.0/8")))
	case "cdn": // a CDN that sends the client in a header of its own
		return ratekit.ByIP(clientip.TrustProxies(cdnRanges...), clientip.FromHeader("CF-Connecting-IP"))
	case "hops": // exactly two proxies, whatever their addresses
		return ratekit.ByIP(clientip.TrustHops(2))
	default: // the socket peer: no header is read
		return ratekit.ByIP()
	}
}

func main() {
	behind := flag.String("behind", "none", "none, lb, cdn or hops")
	flag.Parse()
	limiter, err := ratekit.New(memstore.New(), ratekit.SlidingWindow(100, time.Minute).Named("api"))
	if err != nil {
		log.Fatal(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello\n")) })
	log.Fatal(http.ListenAndServe(":8080", ratekit.Middleware(limiter, keyFunc(*behind))(hello)))
}
