// Package lockout protects login and verification endpoints. A Lockout
// counts attempts (not admitted requests) in several windows at once, each
// with its own block, and blocks a subject (an account, an IP) whose attempts
// exceed a window's allowance. Attempt records and decides in one atomic step
// before the credentials are checked; Middleware counts only failed attempts
// (by response status) and answers like the rest of ratekit: 429
// TOO_MANY_ATTEMPTS with an exact Retry-After, 503 when the store fails (a
// lockout fails closed by default), 400 without a key.
//
// Both of the kit's stores implement Store: store/memstore in process, and
// the Redis store in one Lua script per call.
package lockout
