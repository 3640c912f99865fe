package tier

// CrashAfterWrite makes Upload stop dead once an object is written, before
// it is read back and published: what a crash there leaves (nothing of
// the attempt is cleaned up).
func CrashAfterWrite(t *Tier) { t.crashAfterWrite = true }
