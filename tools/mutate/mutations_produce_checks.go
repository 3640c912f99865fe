package main

// Deliberate breaks of the produce path's inline record walk
// (recordbatch walkPlain) and of its frame written in one call (storage
// writeFrame).

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
		mutation{
			Name:  "frame-in-one-write-failure-unhandled",
			Rule:  "storage I7: a frame written in one call (header and payload) that is refused for lack of space is cut back to the last whole frame and the log stays writable",
			Edits: []edit{{File: "storage/append.go", Old: "\t\tl.w.iov = [2][]byte{}\n\t\tif err != nil {\n\t\t\treturn l.writeFailed(err)\n", New: "\t\tl.w.iov = [2][]byte{}\n\t\tif err != nil {\n\t\t\treturn err\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestNoSpaceRecoversWithoutReopen"}},
		},
	)
}
