module github.com/ratekit/ratekit/tools

go 1.24

require golang.org/x/mod v0.25.0
