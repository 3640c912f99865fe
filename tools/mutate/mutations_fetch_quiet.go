package main

// Deliberate breaks of a fetch session's unchanged partitions (kafka/fetch
// readPartition, pollItems; resolver Version; storage Changes): a quiet
// partition read every time, one answered from its last read after an
// append or a moved log start, and a late Waiter that misses an append
// made between a partition's read and the registration.

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "fetch-quiet-read-every-time",
			Rule:  "fetch: a session partition whose last read found nothing new, unchanged since, is not read again",
			Edits: []edit{{File: "kafka/fetch/read.go", Old: "if ir, ok := f.answerQuiet(it, iso, out); ok {", New: "if ir, ok := f.answerQuiet(it, iso, out); ok && false {"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionUnchangedPartitionsNotRead"}},
		},
		mutation{
			Name:  "fetch-quiet-durable-end-uncounted",
			Rule:  "storage: a log's durable end moving is one of its counted changes",
			Edits: []edit{{File: "storage/commit.go", Old: "\t\tl.mu.end = p.hdr.End()\n\t\tl.changes.Add(1)\n", New: "\t\tl.mu.end = p.hdr.End()\n"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionUnchangedPartitionsNotRead"}},
		},
		mutation{
			Name: "fetch-quiet-log-start-uncounted",
			Rule: "storage, resolver: a log start moved by a trim changes the partition's Version",
			Edits: []edit{
				{File: "storage/trim.go", Old: "\tl.mu.state, l.mu.start = m.State, m.Start\n\tl.changes.Add(1)\n", New: "\tl.mu.state, l.mu.start = m.State, m.Start\n"},
				{File: "resolver/txn_state.go", Old: "\tgone := p.mu.txn.PruneBelow(start)\n\tp.changes.Add(1)\n", New: "\tgone := p.mu.txn.PruneBelow(start)\n"},
			},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionUnchangedPartitionsNotRead"}},
		},
		mutation{
			Name:  "fetch-late-waiter-misses-moved",
			Rule:  "fetch: a long poll registered after its first read reads again every partition whose Version moved since",
			Edits: []edit{{File: "kafka/fetch/kept.go", Old: "\t\tv, _ := h.Version()\n\t\treturn v != ir.version\n", New: "\t\treturn false\n"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionAppendBeforeLateRegistration"}},
		},
		mutation{
			Name:  "fetch-scratch-kept-uncleared",
			Rule:  "fetch: a fetch's kept memory holds nothing of it once released",
			Edits: []edit{{File: "kafka/fetch/scratch.go", Old: "\tclear(s.items)\n\tclear(s.parts)\n", New: ""}},
			Tests: []testRun{{Pkg: "./kafka/fetch/", Run: "TestScratchReleasedZero"}},
		},
	)
}
