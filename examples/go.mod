module github.com/ratekit/ratekit/examples

go 1.24

require (
	github.com/prometheus/client_golang v1.23.2
	github.com/ratekit/ratekit v0.1.0
	github.com/ratekit/ratekit/internal/redistest v0.1.0
	github.com/ratekit/ratekit/observe/prometheus v0.1.0
	github.com/ratekit/ratekit/store/redisstore v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/alicebob/miniredis/v2 v2.40.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	golang.org/x/sys v0.35.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

replace (
	github.com/ratekit/ratekit => ../
	github.com/ratekit/ratekit/internal/redistest => ../internal/redistest
	github.com/ratekit/ratekit/observe/prometheus => ../observe/prometheus
	github.com/ratekit/ratekit/store/redisstore => ../store/redisstore
)
