package main

// Deliberate breaks of retention beside pending transactional offsets
// (offsets expireGroup): an expired offset dropped while a transaction has
// one pending for its partition, and a group dropped while any is pending.

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "offsets-expire-ignores-pending-partition",
			Rule:  "offsets: an expired offset stays while a transaction has an offset pending for its partition",
			Edits: []edit{{File: "offsets/store.go", Old: "if now.Sub(base) < s.opts.Retention || pending[c.TopicPartition] {", New: "if now.Sub(base) < s.opts.Retention {"}},
			Tests: []testRun{{Pkg: "./offsets/", Run: "TestExpiredOffsetKeptWhilePending"}},
		},
		mutation{
			Name:  "offsets-expire-group-ignores-pending",
			Rule:  "offsets: a group stays while a transaction has an offset pending for it",
			Edits: []edit{{File: "offsets/store.go", Old: "\tkept := len(pending)\n", New: "\tkept := 0\n"}},
			Tests: []testRun{{Pkg: "./offsets/", Run: "TestExpiredOffsetKeptWhilePending"}},
		},
	)
}
