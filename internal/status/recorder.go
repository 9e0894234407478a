// Package status records the status a net/http handler writes, for the
// middleware that decides after the handler (lockouts count failures,
// reservations refund by status).
package status

import "net/http"

// A Recorder is a ResponseWriter that remembers the first final status
// written through it: the one WriteHeader was given, or 200 once a body or
// a flush was written first; 0 while nothing was.
type Recorder struct {
	http.ResponseWriter
	Code int
}

// WriteHeader records code, if it is the first final status (an
// informational one, such as 103 Early Hints, is not), and writes it.
func (w *Recorder) WriteHeader(code int) {
	if w.Code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.Code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes b, recording 200 if no status was written before.
func (w *Recorder) Write(b []byte) (int, error) {
	if w.Code == 0 {
		w.Code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the response when the writer can.
func (w *Recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.Code == 0 {
			w.Code = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap returns the writer it wraps, so that http.ResponseController
// reaches its other methods.
func (w *Recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Status returns the status written, or 200 when none was: what net/http
// sends for a handler that wrote nothing.
func (w *Recorder) Status() int {
	if w.Code == 0 {
		return http.StatusOK
	}
	return w.Code
}
