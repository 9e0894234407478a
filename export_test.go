package ratekit

// Internals the external tests reach.
var PolicyQuota = policyQuota

// Validate is the check New applies to each limit.
func (l Limit) Validate() error { return l.validate() }

// Fingerprint is the hash of the parameters at the end of the storage ID.
func (l Limit) Fingerprint() string { return l.def().fingerprint() }
