package main

// Deliberate breaks of the folded CRC32C (crc32c): a batch or frame
// checked with a wrong CRC would be refused (a valid produce answered
// CORRUPT_MESSAGE) or, worse, a corrupt one accepted.

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "crc32c-fold-last-block-dropped",
			Rule:  "crc32c: Update agrees with hash/crc32 on every input (the folded part's last 64-byte block included)",
			Edits: []edit{{File: "crc32c/crc32c_amd64.s", Old: "loop64:\n\tCMPQ CX, $64\n", New: "loop64:\n\tCMPQ CX, $128\n"}},
			Tests: []testRun{
				{Pkg: "./crc32c/", Run: "TestUpdateAgrees"},
				{Pkg: "./recordbatch/", Run: "."},
			},
		},
		mutation{
			Name:  "crc32c-fold-tail-skipped",
			Rule:  "crc32c: Update agrees with hash/crc32 on every input (the bytes after the folded part included)",
			Edits: []edit{{File: "crc32c/crc32c.go", Old: "\treturn crc32.Update(crc, Table, p)\n", New: "\treturn crc32.Update(crc, Table, p[:0])\n"}},
			Tests: []testRun{
				{Pkg: "./crc32c/", Run: "TestUpdateAgrees"},
				{Pkg: "./test/", Run: "TestBadCRCRejected"},
			},
		},
	)
}
