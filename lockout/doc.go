// Package lockout protects login and verification endpoints. A Lockout
// counts attempts in several windows at once, each with its own block, and
// blocks a subject (an account, an IP) whose attempts exceed a window's
// allowance. Attempt records and decides in one atomic step before the
// credentials are checked; Middleware counts only failed attempts (by
// response status) and answers 429 TOO_MANY_ATTEMPTS with an exact
// Retry-After, 503 when the store fails (a lockout fails closed by default),
// 400 without a key. A Lockout is a preset of core limits (each window a
// ratekit.SlidingLog with a Block), so any store that can settle charges
// (store/memstore, the Redis stores) serves it. See
// docs/architecture.md#lockouts in the repository.
package lockout
