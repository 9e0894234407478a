// Package plans applies limits that depend on who is calling: each request
// is charged to the limits of its plan (free, pro, enterprise), named by a
// function of the request. A plan's new numbers start fresh counts, since a
// limit's parameters are part of its storage key. See
// docs/operations.md#limits-per-plan in the repository.
package plans
