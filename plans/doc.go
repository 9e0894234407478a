// Package plans applies limits that depend on who is calling: each request
// is charged to the limits of its plan (free, pro, enterprise), named by a
// function of the request, for example from the plan of its API key.
//
// Every plan's Limiter is built and checked once, by New; a request only
// looks its plan up. The rate-limit headers and error bodies name the
// chosen plan's policies, and since a limit's parameters are part of its
// storage key, changing a plan's numbers starts fresh counts for it. A
// subject that moves to another plan is counted afresh by the new plan's
// limits.
package plans
