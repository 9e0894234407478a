// Package plans applies limits that depend on who is calling: each request
// is charged to the limits of its plan (free, pro, enterprise), named by a
// function of the request. Plans.Update changes the plans and their numbers
// while they serve; counts carry over by limit name and algorithm (see
// package carry). See
// docs/operations.md#limits-per-plan in the repository.
package plans
