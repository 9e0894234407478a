// Package levels limits a multi-tenant service at three levels at once: a
// global limit for all traffic, limits per tenant, and limits per tenant and
// endpoint (net/http ServeMux patterns), with a reputation gate that lets
// well-behaved tenants through while the global limit is exceeded (see
// package reputation). New returns net/http middleware that answers exactly
// as ratekit.Middleware does and takes the same options. See
// docs/architecture.md#reputation-and-levels in the repository.
package levels
