module github.com/ratekit/ratekit

go 1.24
