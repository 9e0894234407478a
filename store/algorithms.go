package store

// The names in ratekit.Spec.Algorithm of the kit's algorithms. They are part
// of every stored key and never change.
const (
	FixedWindow   = "fixed"
	SlidingWindow = "sliding"
	SlidingLog    = "log"
	TokenBucket   = "token"
	LeakyBucket   = "leaky"
	GCRA          = "gcra"
	Suppressed    = "suppressed"
)

// Bucket reports whether alg is one of the bucket algorithms (GCRA,
// TokenBucket, LeakyBucket), which share the emission-interval arithmetic.
func Bucket(alg string) bool {
	return alg == GCRA || alg == TokenBucket || alg == LeakyBucket
}
