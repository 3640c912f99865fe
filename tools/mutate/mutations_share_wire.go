package main

// Deliberate breaks of ShareFetch responses written by reference
// (kafka/share wire.go, kafka/fetchwire): the records framed as the
// copied response frames them, and every response's lease given back.

func init() { mutations = append(mutations, shareWireMutations...) }

var shareWireMutations = []mutation{
	{
		Name:  "share-fetch-lease-kept",
		Rule:  "a ShareFetch response's leased reads are given back once it is written or dropped",
		Edits: []edit{{File: "kafka/conn.go", Old: "\tcase *shareResponse:\n\t\tr.wire.Release()", New: "\tcase *shareResponse:\n\t\t_ = r.wire"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestShareFetchLeaseGivenBack"}},
	},
	{
		Name:  "share-fetch-records-framed-rigid",
		Rule:  "a ShareFetch response written by reference is byte for byte the response with its records copied in",
		Edits: []edit{{File: "kafka/conn.go", Old: "pieces, n := sr.wire.Segments(enc, true)", New: "pieces, n := sr.wire.Segments(enc, false)"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestShareFetchWireSegments"}},
	},
	{
		Name:  "share-fetch-other-batches-answered",
		Rule:  "a ShareFetch answers the read batches that hold an acquired offset, only those",
		Edits: []edit{{File: "kafka/share/wire.go", Old: "\t\tif holds(sp) {\n\t\t\tout = append(out, batches[i])", New: "\t\tif holds(sp) || i == 0 {\n\t\t\tout = append(out, batches[i])"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestBatchesInOneBatchUncopied"}},
	},
	{
		Name:  "share-fetch-reads-unleased",
		Rule:  "a ShareFetch's reads are leased to its response, which answers the batches the copied answer carries",
		Edits: []edit{{File: "kafka/share/read.go", Old: "bs, err = c.log.Read(tp.Topic, tp.Partition, off, chunk, into)", New: "bs, err = c.log.Read(tp.Topic, tp.Partition, off, chunk, nil)"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestFetchIntoAnswersTheCopiedBatches"}},
	},
}
