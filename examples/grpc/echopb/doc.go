// Package echopb is the echo service of ratekit's gRPC example, generated
// from echo.proto by protoc with protoc-gen-go and protoc-gen-go-grpc at
// the versions docs/testing.md pins.
package echopb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative echo.proto
