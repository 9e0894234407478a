// Package adapter is for authors of framework adapters: generic options and
// key functions over a framework's context type, on top of ratekit.Guard, so
// that every framework answers with the statuses, headers and bodies of
// net/http. Users of an existing adapter do not need it. See
// docs/architecture.md#framework-adapters in the repository.
package adapter
