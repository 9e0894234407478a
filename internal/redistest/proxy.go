package redistest

import (
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards loopback TCP connections to a server. It can lose a reply:
// after DropNextReply, the next bytes the server sends are swallowed and the
// client's connection is closed, as when a network fails after a command was
// written; go-redis sees EOF, the classic trigger for its retries. It can also
// delay replies (SetDelay, NewDelayProxy), as a slow Redis or a slow network
// does. Bytes from the client pass through at once.
type Proxy struct {
	Addr     string
	target   string
	ln       net.Listener
	drop     atomic.Bool
	delay    atomic.Int64 // time.Duration added to every reply
	accepted atomic.Int64 // connections accepted so far
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{} // open ones, closed by close
}

// NewProxy starts a proxy to target on a random loopback port; it stops with
// the test.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// NewDelayProxy starts a proxy to target whose every reply reaches the
// client delay after the server sent it (see SetDelay); it stops with the
// test.
func NewDelayProxy(t testing.TB, target string, delay time.Duration) *Proxy {
	t.Helper()
	p := NewProxy(t, target)
	p.SetDelay(delay)
	return p
}

// DropNextReply arms the proxy to lose the next reply.
func (p *Proxy) DropNextReply() { p.drop.Store(true) }

// SetDelay makes every byte the server sends from now on reach the client d
// later (0: at once), on every connection, old and new: added latency, with
// the bytes and their order unchanged and nothing held back on the way to
// the server. Bytes already on their way keep the delay they were given.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(max(d, 0))) }

// Delay returns the delay that SetDelay set.
func (p *Proxy) Delay() time.Duration { return time.Duration(p.delay.Load()) }

// Accepted returns the number of client connections accepted so far: every
// dial of a client, so the difference over a run counts the connections its
// pool opened.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.wg.Add(1)
		go p.forward(c) // dial the server there: many clients may connect at once
	}
}

// forward connects client to the target and copies both ways until either
// side closes.
func (p *Proxy) forward(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	select {
	case <-p.done: // the proxy closed while this dialled
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	default:
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(server, client); server.Close() }()
	p.replies(client, server)
	client.Close()
	<-copied
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// replies copies server bytes to the client, each chunk delay after it was
// read, until a drop is armed or either side closes.
func (p *Proxy) replies(client, server net.Conn) {
	w := newDelayedWriter(client, p.done)
	defer w.finish()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if p.drop.CompareAndSwap(true, false) {
				server.Close()
				return
			}
			if !w.send(slices.Clone(buf[:n]), time.Now().Add(p.Delay())) {
				server.Close()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	close(p.done)
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
