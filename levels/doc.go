// Package levels limits a multi-tenant service at three levels at once:
// globally, per tenant and per tenant and endpoint (net/http ServeMux
// patterns), with a reputation gate that lets well-behaved tenants through
// while the global limit is exceeded. It answers as ratekit.Middleware does.
// See docs/architecture.md#reputation-and-levels in the repository.
package levels
