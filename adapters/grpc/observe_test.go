package ratekitgrpc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/ratekit/ratekit"
	ratekitgrpc "github.com/ratekit/ratekit/adapters/grpc"
	"github.com/ratekit/ratekit/observe"
)

// events records what observers are told.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) Observe(_ context.Context, ev observe.Event) {
	e.mu.Lock()
	e.got = append(e.got, ev.Policy+" "+ev.Outcome.String())
	e.mu.Unlock()
}

// One Limiter per method, named after it: observers (and so metrics) see
// per-method policy names, and each method has its own quota.
func TestPerMethodPolicies(t *testing.T) {
	unaryL, _ := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("echo-unary"))
	streamL, _ := limiter(t, ratekit.FixedWindow(1, time.Minute).Named("echo-stream"))
	var obs events
	_, conn := serve(t, []grpc.ServerOption{
		grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(unaryL, ratekitgrpc.ByIP(), ratekitgrpc.WithObserver(&obs))),
		grpc.StreamInterceptor(ratekitgrpc.StreamServerInterceptor(streamL, ratekitgrpc.ByIP(), ratekitgrpc.WithObserver(&obs))),
	})
	ctx := context.Background()
	unary(ctx, conn)
	unary(ctx, conn)
	for range 2 {
		s, err := conn.NewStream(ctx, streamDesc, streamMethod)
		if err != nil {
			t.Fatal(err)
		}
		_ = s.CloseSend()
		_ = s.RecvMsg(new(struct{}))
	}
	want := []string{"echo-unary allowed", "echo-unary denied", "echo-stream allowed", "echo-stream denied"}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Equal(obs.got, want) {
		t.Errorf("observed %q, want %q", obs.got, want)
	}
}

// ByPeerCertificate keys calls by the verified client certificate's URI
// over mutual TLS; two clients with their own certificates have their own
// counters.
func TestByPeerCertificate(t *testing.T) {
	ca, caKey := newCert(t, nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid = true, true
		c.KeyUsage = x509.KeyUsageCertSign
	})
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	serverCert := tlsCert(t, ca, caKey, func(c *x509.Certificate) {
		c.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	l, _ := limiter(t, ratekit.FixedWindow(1, time.Minute))
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven,
	})), grpc.UnaryInterceptor(ratekitgrpc.UnaryServerInterceptor(l, ratekitgrpc.ByPeerCertificate(),
		ratekitgrpc.WithErrorHandler(func(context.Context, error) {}))))
	srv.RegisterService(&echoDesc, &echoServer{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	dial := func(uri string) *grpc.ClientConn {
		cfg := &tls.Config{RootCAs: pool}
		if uri != "" {
			u, _ := url.Parse(uri)
			cfg.Certificates = []tls.Certificate{tlsCert(t, ca, caKey, func(c *x509.Certificate) {
				c.URIs = []*url.URL{u}
				c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
			})}
		}
		conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	alice, bob, anonymous := dial("spiffe://test/alice"), dial("spiffe://test/bob"), dial("")
	ctx := context.Background()
	for i, tc := range []struct {
		conn *grpc.ClientConn
		code codes.Code
	}{{alice, codes.OK}, {alice, codes.ResourceExhausted}, {bob, codes.OK}, {anonymous, codes.InvalidArgument}} {
		if r := unary(ctx, tc.conn); status.Code(r.err) != tc.code {
			t.Errorf("call %d: %v, want %v", i+1, r.err, tc.code)
		}
	}
}

// newCert makes a certificate signed by parent (itself when nil).
func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "ratekit test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	edit(tmpl)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func tlsCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) tls.Certificate {
	c, key := newCert(t, ca, caKey, edit)
	return tls.Certificate{Certificate: [][]byte{c.Raw}, PrivateKey: key, Leaf: c}
}
