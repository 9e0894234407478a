module github.com/ratekit/ratekit/bench

go 1.26.0

require (
	github.com/go-chi/httprate v0.16.1
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/ratekit/ratekit v0.1.0
	github.com/ratekit/ratekit/internal/redistest v0.1.0
	github.com/ratekit/ratekit/store/redisstore v0.1.0
	github.com/ratekit/ratekit/store/redisstore/rueidisstore v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/redis/rueidis v1.0.69
	github.com/sethvargo/go-limiter v0.7.1
	github.com/throttled/throttled/v2 v2.15.0
	github.com/ulule/limiter/v3 v3.11.2
	golang.org/x/time v0.12.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/alicebob/miniredis/v2 v2.40.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/ratekit/ratekit/adapters/grpc v0.1.0
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace (
	github.com/ratekit/ratekit => ../
	github.com/ratekit/ratekit/internal/redistest => ../internal/redistest
	github.com/ratekit/ratekit/store/redisstore => ../store/redisstore
	github.com/ratekit/ratekit/store/redisstore/rueidisstore => ../store/redisstore/rueidisstore
)

replace github.com/ratekit/ratekit/adapters/grpc => ../adapters/grpc
