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

// The ErrorInfo metadata of a refusal by InFlight limits alone: quota_unit
// "concurrent-requests", as RateLimit-Policy's qu parameter says. A slot
// comes back when any call ends, so such a refusal says nothing about when
// the method's other calls would pass.
const (
	infoQuotaUnit       = "quota_unit"
	quotaUnitConcurrent = "concurrent-requests"
)

// mdFields is the response.HeaderSetter of a call: it keeps the rate-limit
// fields a Guard sets, to send them under their metadata names, and drops
// what only HTTP has (Cache-Control).
type mdFields struct {
	vals [numFields]string // "" when not set
}

// numFields is how many fields mdFields keeps.
const numFields = 7

// fieldName is the metadata name of field i, in the order sent.
func fieldName(i int) string {
	switch i {
	case 0:
		return "x-ratelimit-limit"
	case 1:
		return "x-ratelimit-remaining"
	case 2:
		return "x-ratelimit-reset"
	case 3:
		return "ratelimit-policy"
	case 4:
		return "ratelimit"
	case fieldRetryAfter:
		return FieldRetryAfter
	}
	return FieldPushback
}

// Indexes of the fields that are set outside Set.
const (
	fieldRetryAfter = 5
	fieldPushback   = 6
)

// Set keeps a field ratekit sets.
func (f *mdFields) Set(key, value string) {
	switch key {
	case "X-Ratelimit-Limit":
		f.vals[0] = value
	case "X-Ratelimit-Remaining":
		f.vals[1] = value
	case "X-Ratelimit-Reset":
		f.vals[2] = value
	case "Ratelimit-Policy":
		f.vals[3] = value
	case "Ratelimit":
		f.vals[4] = value
	case "Retry-After":
		f.vals[fieldRetryAfter] = value
	}
}

// metadata returns the fields as metadata, or nil when there are none.
func (f *mdFields) metadata() metadata.MD {
	n := 0
	for _, v := range f.vals {
		if v != "" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	md := make(metadata.MD, n)
	values := make([]string, 0, n) // one backing array for every field's slice
	for i, v := range f.vals {
		if v != "" {
			values = append(values, v)
			md[fieldName(i)] = values[len(values)-1 : len(values) : len(values)]
		}
	}
	return md
}

// refusal returns the trailers and the status error of a verdict that does
// not pass.
func refusal(v ratekit.Verdict, fields *mdFields) (metadata.MD, error) {
	e := v.Response
	if e.Status == http.StatusTooManyRequests && v.Err == nil {
		d := v.Decision
		retry := d.RetryAfter
		if d.Unsatisfiable {
			retry = 0
		}
		return statusOf(e, retry, decisionViolations(d), inFlightOnly(d), fields)
	}
	return statusOf(e, time.Duration(e.Context.RetryAfter)*time.Second, contextViolations(e.Context), false, fields)
}

// Error returns the gRPC status error of a response.Error from elsewhere in
// ratekit, such as lockout.Lockout.Response or Enforce, so that a handler
// answers as the interceptors do: codes.ResourceExhausted for a 429, with
// RetryInfo (its whole seconds), QuotaFailure and ErrorInfo;
// codes.Unavailable for a 503; codes.InvalidArgument for a 400 or 413.
// Error(nil) is nil, and an error that is no *response.Error is
// codes.Internal without its text. Send the trailers with grpc.SetTrailer
// when the client should see retry-after and grpc-retry-pushback-ms too;
// Trailers returns them.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var e *response.Error
	if !errors.As(err, &e) {
		return status.Error(codes.Internal, "internal error")
	}
	_, st := statusOf(e, time.Duration(e.Context.RetryAfter)*time.Second, contextViolations(e.Context), false, &mdFields{})
	return st
}

// violation is one limit that refused a call.
type violation struct {
	name, description string
	quota             int64
}

// decisionViolations lists the limits that refused d: the binding one
// first, then every other that denied, as response.Details.Violated does.
func decisionViolations(d ratekit.Decision) []violation {
	out := []violation{limitViolation(d.Limit)}
	for _, s := range d.States {
		if !s.Allowed && s.Limit.Name() != d.Limit.Name() {
			out = append(out, limitViolation(s.Limit))
		}
	}
	return out
}

// inFlightOnly reports whether every limit that refused d is an InFlight
// limit: a refusal no rate limit took part in.
func inFlightOnly(d ratekit.Decision) bool {
	if !d.Limit.Spec().Concurrent {
		return false
	}
	for _, s := range d.States {
		if !s.Allowed && !s.Limit.Spec().Concurrent {
			return false
		}
	}
	return true
}

func limitViolation(l ratekit.Limit) violation {
	return violation{name: l.Name(), description: l.String(), quota: l.Spec().Quota}
}

// contextViolations lists the limits a response.Details names; only the
// binding one's quota is known.
func contextViolations(c response.Details) []violation {
	if c.Policy == "" {
		return nil
	}
	out := []violation{{name: c.Policy, quota: c.Limit}}
	for _, name := range c.Violated {
		if name != c.Policy {
			out = append(out, violation{name: name})
		}
	}
	return out
}

// statusOf builds the status of e and its trailers (fields, plus
// retry-after and the pushback). retry is the exact time until the call
// could pass, 0 when it never can; concurrent marks a refusal by InFlight
// limits alone.
func statusOf(e *response.Error, retry time.Duration, violations []violation, concurrent bool, fields *mdFields) (metadata.MD, error) {
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
			fields.vals[fieldRetryAfter] = strconv.FormatInt(e.Context.RetryAfter, 10)
			fields.vals[fieldPushback] = strconv.FormatInt(int64((retry+time.Millisecond-1)/time.Millisecond), 10)
		} else {
			fields.vals[fieldPushback] = "-1"
		}
	}
	if code == codes.ResourceExhausted && len(violations) > 0 {
		q := &errdetails.QuotaFailure{}
		for _, v := range violations {
			q.Violations = append(q.Violations, &errdetails.QuotaFailure_Violation{
				QuotaId: v.name, QuotaValue: v.quota, Description: v.description,
			})
		}
		details = append(details, q)
	}
	st, err := status.New(code, e.Message).WithDetails(details...)
	if err != nil { // unreachable: the details are well-formed messages
		st = status.New(code, e.Message)
	}
	return fields.metadata(), st.Err()
}
