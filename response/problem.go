package response

import (
	"encoding/json"
	"net/http"
)

// problemTypes prefixes the problem types IANA registered for the IETF
// RateLimit header fields draft (draft-ietf-httpapi-ratelimit-headers-11, §5).
const problemTypes = "https://iana.org/assignments/http-problem-types#"

// Problem renders an RFC 9457 problem (application/problem+json) with the
// IETF RateLimit draft's problem types (https://iana.org/assignments/http-problem-types):
// quota-exceeded for a 429, or abnormal-usage-detected for one that is
// Details.Blocked, both with the extension member violated-policies;
// temporary-reduced-capacity for a 503; about:blank otherwise. The message
// is the detail; code, retryAfter, limit, remaining and policy are extension
// members as in JSON.
func Problem(e *Error) (string, []byte) {
	type problem struct {
		Type       string   `json:"type"`
		Title      string   `json:"title"`
		Status     int      `json:"status"`
		Detail     string   `json:"detail"`
		Violated   []string `json:"violated-policies,omitempty"`
		Code       Code     `json:"code"`
		RetryAfter int64    `json:"retryAfter,omitempty"`
		Limit      int64    `json:"limit,omitempty"`
		Remaining  *int64   `json:"remaining,omitempty"`
		Policy     string   `json:"policy,omitempty"`
	}
	p := problem{Type: "about:blank", Title: http.StatusText(e.Status), Status: e.Status, Detail: e.Message,
		Code: e.Code, RetryAfter: e.Context.RetryAfter, Limit: e.Context.Limit, Policy: e.Context.Policy}
	switch {
	case e.Status == http.StatusTooManyRequests:
		p.Type, p.Title = problemTypes+"quota-exceeded", "Request cannot be satisfied as assigned quota has been exceeded"
		if e.Context.Blocked {
			p.Type, p.Title = problemTypes+"abnormal-usage-detected", "Request not satisfied due to detection of abnormal request pattern"
		}
		p.Violated = e.Context.Violated
		if len(p.Violated) == 0 && e.Context.Policy != "" {
			p.Violated = []string{e.Context.Policy}
		}
	case e.Status == http.StatusServiceUnavailable:
		p.Type, p.Title = problemTypes+"temporary-reduced-capacity", "Temporary reduced capacity"
	}
	if e.Context.Policy != "" {
		p.Remaining = &e.Context.Remaining
	}
	b, _ := json.Marshal(p)
	return "application/problem+json", b
}
