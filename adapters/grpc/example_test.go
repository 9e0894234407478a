package ratekitgrpc_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/lockout"
	"github.com/ratekit/ratekit/store/memstore"
)

// Limit every call of a server to 2 per minute per client IP (the peer's
// address; see clientip.TrustProxies for proxies). The health service is
// counted here only because the example has no other service.
func ExampleUnaryServerInterceptor() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(2, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(
		ratekitgrpc.UnaryServerInterceptor(limiter, ratekitgrpc.ByIP(), ratekitgrpc.WithoutDefaultSkips())))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for range 3 {
		_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{})
		st := status.Convert(err)
		fmt.Printf("%v %q\n", st.Code(), st.Message())
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				fmt.Println("retry in", ri.RetryDelay.AsDuration().Round(time.Second))
			}
		}
	}
	// Output:
	// OK ""
	// OK ""
	// ResourceExhausted "Too many requests. Try again in 60 seconds."
	// retry in 1m0s
}

// A handler that checks passwords answers a locked-out account as the
// interceptors answer a refusal.
func ExampleError() {
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 1, Window: 15 * time.Minute, Block: 15 * time.Minute},
	}})
	if err != nil {
		panic(err)
	}
	login := func(ctx context.Context, account string) error {
		if err := lo.Enforce(ctx, account); err != nil {
			return ratekitgrpc.Error(err)
		}
		return nil // check the password here; lo.Reset(ctx, account) on success
	}
	for range 2 {
		err := login(context.Background(), "alice")
		st := status.Convert(err)
		fmt.Printf("%v %q\n", st.Code(), st.Message())
		for _, d := range st.Details() {
			switch d := d.(type) {
			case *errdetails.RetryInfo:
				fmt.Println("retry in", d.RetryDelay.AsDuration())
			case *errdetails.QuotaFailure:
				fmt.Println("violated", d.Violations[0].QuotaId, d.Violations[0].QuotaValue)
			case *errdetails.ErrorInfo:
				fmt.Println("reason", d.Reason)
			}
		}
	}
	// Output:
	// OK ""
	// ResourceExhausted "Too many attempts. Try again in 900 seconds."
	// reason TOO_MANY_ATTEMPTS
	// retry in 15m0s
	// violated temp 1
}

// A login method that trusts devices: the device token travels in metadata
// ("device-token") instead of a cookie. The owner's token keeps working
// while failures from elsewhere lock the account.
func Example_trustedDevices() {
	lo, err := lockout.New(memstore.New(), lockout.Config{Name: "login", Windows: []lockout.Window{
		{Scope: "temp", Attempts: 1, Window: 15 * time.Minute, Block: 15 * time.Minute},
	}, Devices: &lockout.Devices{Keys: [][]byte{[]byte("32 or more random bytes, kept secret")}}})
	if err != nil {
		panic(err)
	}
	// login is the method's body: in a server, ctx is the call's context and
	// the token is read with metadata.ValueFromIncomingContext(ctx, "device-token")
	// and returned with grpc.SetHeader.
	login := func(ctx context.Context, account, password, token string) (newToken string, err error) {
		d, err := lo.AttemptDevice(ctx, account, token)
		if e := lo.Response(d, err); e != nil {
			return "", ratekitgrpc.Error(e) // with d.Revoked, also tell the client to drop its token
		}
		if password != "right" {
			return "", status.Error(codes.Unauthenticated, "wrong username or password") // the failure stays counted
		}
		if d.Trusted {
			return token, lo.Refund(ctx, d) // a trusted success: the device's attempt comes back
		}
		if err := lo.Reset(ctx, account); err != nil {
			return "", err
		}
		newToken, _, err = lo.TrustDevice(ctx, account)
		return newToken, err
	}
	ctx := context.Background()
	token, err := login(ctx, "alice", "right", "")
	fmt.Println("first login:", status.Code(err), token != "")
	_, err = login(ctx, "alice", "guess", "") // an attacker, without the token
	fmt.Println("attacker:", status.Code(err))
	_, err = login(ctx, "alice", "right", "")
	fmt.Println("alice without her token:", status.Code(err))
	_, err = login(ctx, "alice", "right", token)
	fmt.Println("alice with her token:", status.Code(err))
	// Output:
	// first login: OK true
	// attacker: Unauthenticated
	// alice without her token: ResourceExhausted
	// alice with her token: OK
}

// flaky is a health service whose service "db" is down.
type flaky struct {
	healthpb.UnimplementedHealthServer
}

func (flaky) Check(_ context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if req.Service == "db" {
		return nil, status.Error(codes.Unavailable, "the database is down")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// Count only the calls the server could serve: a call that ends with
// Unavailable (HTTP 503) is refunded once its handler returns.
func ExampleWithCountIf() {
	limiter, err := ratekit.New(memstore.New(), ratekit.FixedWindow(1, time.Minute).Named("api"))
	if err != nil {
		panic(err)
	}
	unavailable := ratekitgrpc.HTTPStatus(codes.Unavailable)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(limiter, ratekitgrpc.ByIP(),
		ratekitgrpc.WithoutDefaultSkips(), ratekitgrpc.WithCountIf(func(status int) bool { return status != unavailable }))))
	healthpb.RegisterHealthServer(srv, flaky{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	client := healthpb.NewHealthClient(conn)
	for _, service := range []string{"db", "db", "", ""} {
		_, err := client.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
		fmt.Printf("%q: %v\n", service, status.Code(err))
	}
	// Output:
	// "db": Unavailable
	// "db": Unavailable
	// "": OK
	// "": ResourceExhausted
}
