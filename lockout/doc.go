// Package lockout protects login and verification endpoints: a Lockout
// counts a subject's attempts (an account's, an IP's) in several windows,
// each with its own block, and Middleware counts only failed ones. With
// Config.Devices, the devices an account has logged in from are trusted:
// their attempts count against the device, not the account, so failures
// made elsewhere never lock the owner out. A Lockout is a preset of core
// limits, so any store that can settle charges serves it. See
// docs/operations.md#protecting-a-login-form in the repository.
package lockout
