package main

import (
	"context"
	"errors"
	"io"

	"github.com/ratekit/ratekit/examples/grpc/echopb"
)

// echoServer answers every message with itself.
type echoServer struct {
	echopb.UnimplementedEchoServer
}

func (echoServer) UnaryEcho(_ context.Context, req *echopb.EchoRequest) (*echopb.EchoResponse, error) {
	return &echopb.EchoResponse{Message: req.GetMessage()}, nil
}

func (echoServer) BidirectionalStreamingEcho(stream echopb.Echo_BidirectionalStreamingEchoServer) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&echopb.EchoResponse{Message: req.GetMessage()}); err != nil {
			return err
		}
	}
}
