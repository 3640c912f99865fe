package main

// Deliberate breaks of published ranges read in pieces (merged ranges
// in pieces, commit ranges in pieces, checked range reads, the range
// cache): a read below the cache fetches only the pieces it needs, and
// checks each against its own published SHA-256.

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "commit-range-not-cut-in-pieces",
			Rule:  "commit ranges in pieces: a commit's range longer than PieceBytes is published in pieces, so a read of one offset fetches one piece, not the whole range",
			Edits: []edit{{File: "cluster/diskless/commit.go", Old: "\t\tif r.Len > pieceBytes {\n", New: "\t\tif r.Len > pieceBytes && false {\n"}},
			Tests: []testRun{
				{Pkg: "./cluster/diskless/", Run: "TestCommitRangeReadsInPieces"},
				{Pkg: "./cluster/node/", Run: "TestReadBelowCacheFetchesAPiece"},
			},
		},
		mutation{
			Name:  "piece-sha256-unchecked",
			Rule:  "checked range reads, commit ranges in pieces: a piece read alone is checked against its own published SHA-256, never served unchecked",
			Edits: []edit{{File: "cluster/diskless/read.go", Old: "if int64(len(data)) != r.Len || sha256.Sum256(data) != r.SHA256 {", New: "if int64(len(data)) != r.Len || (r.Base == r.Record && sha256.Sum256(data) != r.SHA256) {"}},
			Tests: []testRun{
				{Pkg: "./cluster/diskless/", Run: "TestCommitRangeReadsInPieces|TestMergedRangeReadsInPieces"},
			},
		},
		mutation{
			Name:  "commit-piece-summed-over-wrong-bytes",
			Rule:  "commit ranges in pieces: each piece's published SHA-256 is that of exactly its bytes",
			Edits: []edit{{File: "cluster/diskless/pieces.go", Old: "sha256.Sum256(data[q.Pos : q.Pos+q.Len])", New: "sha256.Sum256(data[q.Pos : q.Pos+q.Len-1])"}},
			Tests: []testRun{{Pkg: "./cluster/diskless/", Run: "TestCommitRangeReadsInPieces"}},
		},
		mutation{
			Name:  "range-cache-keeps-no-piece",
			Rule:  "the range cache: a piece read below the cache is kept, checked, so the same read again fetches nothing",
			Edits: []edit{{File: "cluster/node/published.go", Old: "\t\tp.n.ranges.put(keyOf(rs[i]), data[j])\n", New: ""}},
			Tests: []testRun{{Pkg: "./cluster/node/", Run: "TestReadBelowCacheFetchesAPiece"}},
		},
	)
}
