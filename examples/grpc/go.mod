module github.com/ratekit/ratekit/examples/grpc

go 1.26.0

require (
	github.com/ratekit/ratekit v0.1.0
	github.com/ratekit/ratekit/adapters/grpc v0.1.0
	github.com/ratekit/ratekit/internal/redistest v0.1.0
	github.com/ratekit/ratekit/store/redisstore v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/alicebob/miniredis/v2 v2.40.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/ratekit/ratekit => ../..
	github.com/ratekit/ratekit/adapters/grpc => ../../adapters/grpc
	github.com/ratekit/ratekit/internal/redistest => ../../internal/redistest
	github.com/ratekit/ratekit/store/redisstore => ../../store/redisstore
)
