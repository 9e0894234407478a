// Package lockout protects login and verification endpoints. A Lockout
// counts attempts (not admitted requests) in several windows at once, each
// with its own block, and blocks a subject (an account, an IP) whose attempts
// exceed a window's allowance. Attempt records and decides in one atomic step
// before the credentials are checked; Middleware counts only failed attempts
// (by response status) and answers like the rest of ratekit: 429
// TOO_MANY_ATTEMPTS with an exact Retry-After, 503 when the store fails (a
// lockout fails closed by default), 400 without a key.
//
// A Lockout is a preset of core limits: each window is a ratekit.SlidingLog
// with a Block, and every window of a Lockout is one ratekit.Limiter, so any
// store that can settle charges (store/memstore, the Redis stores) serves
// it with its ordinary calls: Reserve records an attempt, Settle refunds one
// that did not fail, Reset clears the subject. There is no lockout store
// contract, script or state of its own. A subject's state is kept under the
// Lockout's Name, so lockouts with windows alike keep apart.
package lockout
