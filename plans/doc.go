// Package plans applies limits that depend on who is calling: each request
// is charged to the limits of its plan (free, pro, enterprise), named by a
// function of the request, for example from the plan of its API key.
//
// New builds and checks every plan's Limiter once; a request only looks its
// plan up. Headers and error bodies name the chosen plan's policies. Since a
// limit's parameters are part of its storage key, a plan's new numbers start
// fresh counts, and a subject that moves to another plan is counted afresh.
// See docs/operations.md#limits-per-plan in the repository.
package plans
