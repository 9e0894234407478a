module github.com/ratekit/ratekit/store/redisstore/integration

go 1.24

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/ratekit/ratekit v0.1.0
	github.com/ratekit/ratekit/internal/redistest v0.1.0
	github.com/ratekit/ratekit/store/redisstore v0.1.0
	github.com/ratekit/ratekit/store/redisstore/rueidisstore v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
	github.com/redis/rueidis v1.0.69
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.31.0 // indirect
)

replace (
	github.com/ratekit/ratekit => ../../..
	github.com/ratekit/ratekit/internal/redistest => ../../../internal/redistest
	github.com/ratekit/ratekit/store/redisstore => ..
	github.com/ratekit/ratekit/store/redisstore/rueidisstore => ../rueidisstore
)
