package redistest

import (
	"net"
	"time"
)

// delayedWriter writes chunks to a connection in the order they were sent,
// none before its due time: a FIFO line of fixed latency. A chunk due earlier
// than the one ahead of it (after SetDelay shortened the delay) waits for it,
// so the order never changes.
type delayedWriter struct {
	conn   net.Conn
	chunks chan chunk
	failed chan struct{} // closed when a write failed or the proxy stopped
	exited chan struct{} // closed when the writing goroutine returned
	stop   <-chan struct{}
}

type chunk struct {
	data []byte
	due  time.Time
}

func newDelayedWriter(conn net.Conn, stop <-chan struct{}) *delayedWriter {
	w := &delayedWriter{
		conn:   conn,
		chunks: make(chan chunk, 1024),
		failed: make(chan struct{}),
		exited: make(chan struct{}),
		stop:   stop,
	}
	go w.run()
	return w
}

// send queues data to be written at due; it reports false once writing has
// failed. It blocks while 1024 chunks wait, as a full socket buffer would.
func (w *delayedWriter) send(data []byte, due time.Time) bool {
	select {
	case w.chunks <- chunk{data, due}:
		return true
	case <-w.failed:
		return false
	}
}

// finish writes what is queued, unless writing failed or the proxy stopped,
// and returns when the writer has.
func (w *delayedWriter) finish() {
	close(w.chunks)
	<-w.exited
}

func (w *delayedWriter) run() {
	defer close(w.exited)
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for c := range w.chunks {
		if wait := time.Until(c.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-w.stop:
				w.fail()
				return
			}
		}
		if _, err := w.conn.Write(c.data); err != nil {
			w.fail()
			return
		}
	}
}

// fail unblocks send for good and discards what is still queued.
func (w *delayedWriter) fail() {
	close(w.failed)
	go func() {
		for range w.chunks { // until finish closes it
		}
	}()
}
