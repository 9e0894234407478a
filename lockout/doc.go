// Package lockout protects login and verification endpoints: a Lockout
// counts a subject's attempts (an account's, an IP's) in several windows,
// each with its own block, and Middleware counts only failed ones. A
// Lockout is a preset of core limits, so any store that can settle charges
// serves it. See docs/architecture.md#lockouts in the repository.
package lockout
