module github.com/ratekit/ratekit/store/redisstore/rueidisstore

go 1.24

require (
	github.com/ratekit/ratekit v0.1.0
	github.com/redis/rueidis v1.0.69
)

require golang.org/x/sys v0.31.0 // indirect

replace github.com/ratekit/ratekit => ../../..
