package main

// Deliberate breaks of the sparse time index (storage/timeindex.go):
// SeekTime, Open and HardTrim each must account for the entries that
// raised a log's running max without a time key of their own, and
// recovery must key the raises of the tail it re-indexes.

func init() { mutations = append(mutations, timeIndexMutations...) }

var timeIndexMutations = []mutation{
	{
		Name:  "seek-time-unkeyed-raise-ignored",
		Rule:  "the sparse time index: SeekTime finds an entry that raised the running max to the timestamp without a time key",
		Edits: []edit{{File: "storage/timeindex.go", Old: "\t\tif h.MaxTime >= ts {\n\t\t\toff, found = h.Offset, true", New: "\t\tif h.MaxTime >= ts && false {\n\t\t\toff, found = h.Offset, true"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSeekTimeSparse"}},
	},
	{
		Name:  "open-run-max-from-key-only",
		Rule:  "the sparse time index: Open recovers a log's running max from its newest time key and the unkeyed raises past it",
		Edits: []edit{{File: "storage/timeindex.go", Old: "\t\trunMax = max(runMax, h.MaxTime)\n", New: "\t\trunMax = max(runMax, 0*h.MaxTime)\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestSeekTimeAcrossReopen"}},
	},
	{
		Name:  "recovered-tail-raise-unkeyed",
		Rule:  "the sparse time index: recovery gives the first raise of the running max in the re-indexed tail a time key",
		Edits: []edit{{File: "storage/recover.go", Old: "			if timeKeyDue(t.keyed, t.keyAt, h.Offset) {", New: "			if false && timeKeyDue(t.keyed, t.keyAt, h.Offset) {"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestCrashPoints$"}},
	},
	{
		Name:  "hard-trim-unkeyed-raise-dropped",
		Rule:  "the sparse time index: HardTrim keeps the running max at the trim point when the highest raise it removes had no time key",
		Edits: []edit{{File: "storage/timeindex.go", Old: "\t\tif h.MaxTime > runMax {\n\t\t\trunMax, at = h.MaxTime, h.Offset", New: "\t\tif h.MaxTime > runMax && false {\n\t\t\trunMax, at = h.MaxTime, h.Offset"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestHardTrimUnkeyedRaise"}},
	},
}
