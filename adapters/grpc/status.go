package ratekitgrpc

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ratekit/ratekit"
	"github.com/ratekit/ratekit/response"
)

// Domain is the ErrorInfo domain of the statuses ratekitgrpc answers with.
const Domain = "ratekit"

// Metadata field names, besides the rate-limit fields of WithHeaders.
const (
	// FieldRetryAfter carries a refusal's Retry-After in whole seconds, as
	// HTTP's header does.
	FieldRetryAfter = "retry-after"
	// FieldPushback is gRPC's server pushback (gRFC A6): the milliseconds a
	// client's retry policy waits before it tries again, or -1 for a call
	// that can never pass.
	FieldPushback = "grpc-retry-pushback-ms"
)

// The ErrorInfo metadata of a refusal by InFlight limits alone, as
// RateLimit-Policy's qu parameter says: the client holds back no other call.
const (
	infoQuotaUnit       = "quota_unit"
	quotaUnitConcurrent = "concurrent-requests"
)

// mdFields is the response.HeaderSetter of a call: it keeps the rate-limit
// fields a Guard sets, to send them under their metadata names, and drops
// what only HTTP has (Cache-Control); "" is a field not set. A fixed array
// sent with one backing slice: BenchmarkOverhead/ratekit takes about 13%
// more CPU time with a metadata.MD and a slice per field (14 allocations,
// not 6).
type mdFields [numFields]string

// numFields is how many fields mdFields keeps.
const numFields = 7

// fieldNames returns the headers mdFields keeps and their metadata names;
// statusOf sets the last two.
func fieldNames() [numFields]struct{ header, md string } {
	return [numFields]struct{ header, md string }{
		{"X-Ratelimit-Limit", "x-ratelimit-limit"},
		{"X-Ratelimit-Remaining", "x-ratelimit-remaining"},
		{"X-Ratelimit-Reset", "x-ratelimit-reset"},
		{"Ratelimit-Policy", "ratelimit-policy"},
		{"Ratelimit", "ratelimit"},
		{"Retry-After", FieldRetryAfter},
		{"", FieldPushback},
	}
}

// Indexes of the fields statusOf sets.
const (
	fieldRetryAfter = 5
	fieldPushback   = 6
)

// Set keeps a field ratekit sets.
func (f *mdFields) Set(key, value string) {
	names := fieldNames()
	for i := range fieldPushback {
		if names[i].header == key {
			f[i] = value
			return
		}
	}
}

// metadata returns the fields as metadata, or nil when there are none.
func (f *mdFields) metadata() metadata.MD {
	n := 0
	for _, v := range f {
		if v != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	md := make(metadata.MD, n)
	values := make([]string, 0, n) // one backing array for every field's slice
	names := fieldNames()
	for i, v := range f {
		if v != "" {
			values = append(values, v)
			md[names[i].md] = values[len(values)-1 : len(values) : len(values)]
		}
	}
	return md
}

// refusal returns the status error of a verdict that does not pass, and
// adds its trailers to fields.
func refusal(v ratekit.Verdict, fields *mdFields) error {
	if v.Response.Status != http.StatusTooManyRequests || v.Err != nil {
		return errorStatus(v.Response, fields)
	}
	retry := v.Decision.RetryAfter
	if v.Decision.Unsatisfiable {
		retry = 0
	}
	violations, concurrent := decisionViolations(v.Decision)
	return statusOf(v.Response, retry, violations, concurrent, fields)
}

// Error returns the gRPC status error of a response.Error from elsewhere in
// ratekit, such as lockout.Lockout.Response or Enforce, so that a handler
// answers as the interceptors do: codes.ResourceExhausted for a 429, with
// RetryInfo (its whole seconds), QuotaFailure and ErrorInfo;
// codes.Unavailable for a 503; codes.InvalidArgument for a 400 or 413.
// Error(nil) is nil, and an error that is no *response.Error is
// codes.Internal without its text.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var e *response.Error
	if !errors.As(err, &e) {
		return status.Error(codes.Internal, "internal error")
	}
	return errorStatus(e, &mdFields{})
}

// decisionViolations lists the limits that refused d: the binding one
// first, then every other that denied, as response.Details.Violated does.
// concurrent reports that they are all InFlight limits.
func decisionViolations(d ratekit.Decision) (out []*errdetails.QuotaFailure_Violation, concurrent bool) {
	concurrent = true
	add := func(l ratekit.Limit) {
		out = append(out, &errdetails.QuotaFailure_Violation{QuotaId: l.Name(), QuotaValue: l.Spec().Quota, Description: l.String()})
		concurrent = concurrent && l.Spec().Concurrent
	}
	add(d.Limit)
	for _, s := range d.States {
		switch {
		case s.Allowed:
		case s.Limit.Name() != d.Limit.Name():
			add(s.Limit)
		default: // the binding limit's name: listed once, but every denial counts
			concurrent = concurrent && s.Limit.Spec().Concurrent
		}
	}
	return out, concurrent
}

// errorStatus returns the status error of e as its response.Details tell
// it: the retry time in whole seconds, and only the binding limit's quota.
func errorStatus(e *response.Error, fields *mdFields) error {
	c := e.Context
	var violations []*errdetails.QuotaFailure_Violation
	if c.Policy != "" {
		violations = append(violations, &errdetails.QuotaFailure_Violation{QuotaId: c.Policy, QuotaValue: c.Limit})
		for _, name := range c.Violated {
			if name != c.Policy {
				violations = append(violations, &errdetails.QuotaFailure_Violation{QuotaId: name})
			}
		}
	}
	return statusOf(e, time.Duration(c.RetryAfter)*time.Second, violations, false, fields)
}

// statusOf returns the status error of e and adds retry-after and the
// pushback to fields. retry is the exact time until the call
// could pass, 0 when it never can; concurrent marks a refusal by InFlight
// limits alone.
func statusOf(e *response.Error, retry time.Duration, violations []*errdetails.QuotaFailure_Violation, concurrent bool, fields *mdFields) error {
	code := codes.InvalidArgument
	switch e.Status {
	case http.StatusTooManyRequests:
		code = codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		code = codes.Unavailable
	}
	info := &errdetails.ErrorInfo{Reason: string(e.Code), Domain: Domain}
	if concurrent && code == codes.ResourceExhausted {
		info.Metadata = map[string]string{infoQuotaUnit: quotaUnitConcurrent}
	}
	details := []protoadapt.MessageV1{info}
	if code != codes.InvalidArgument {
		if retry > 0 {
			details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(retry)})
			fields[fieldRetryAfter] = strconv.FormatInt(e.Context.RetryAfter, 10)
			fields[fieldPushback] = strconv.FormatInt(int64((retry+time.Millisecond-1)/time.Millisecond), 10)
		} else {
			fields[fieldPushback] = "-1"
		}
	}
	if code == codes.ResourceExhausted && len(violations) > 0 {
		details = append(details, &errdetails.QuotaFailure{Violations: violations})
	}
	return statusError(code, e.Message, details...)
}

// statusError returns the status error of code and msg with details.
func statusError(code codes.Code, msg string, details ...protoadapt.MessageV1) error {
	st := status.New(code, msg)
	if withDetails, err := st.WithDetails(details...); err == nil { // it fails only on malformed messages
		st = withDetails
	}
	return st.Err()
}

// HTTPStatus returns the HTTP status of a gRPC code, the one a WithCountIf
// function receives for a call that ended with c: the mapping google.rpc.Code
// documents, which grpc-gateway follows too (OK 200, InvalidArgument 400,
// NotFound 404, ResourceExhausted 429, Unavailable 503, Unknown and any code
// it does not name 500, ...).
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.Canceled:
		return 499 // the client closed the request; no constant in net/http
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.AlreadyExists, codes.Aborted:
		return http.StatusConflict
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
