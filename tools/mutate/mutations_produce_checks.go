package main

// Deliberate breaks of the produce path's inline record walk
// (recordbatch walkPlain).

func init() {
	mutations = append(mutations,
		mutation{
			Name: "plain-walk-two-byte-varint-misread",
			Rule: "recordbatch: the uncompressed walk's inline varints read what the stream walk reads (the record count check)",
			Edits: []edit{{File: "recordbatch/recordwalk.go",
				Old: "u := int32(b0&0x7f) | int32(b1)<<7",
				New: "u := int32(b0&0x7f) | int32(b1)<<8"}},
			Tests: []testRun{{Pkg: "./recordbatch/", Run: "TestWalkPlainAgreesWithStream"}},
		},
	)
}
