package main

// Deliberate breaks of ShareFetch responses written by reference
// (kafka/share wire.go, kafka/fetchwire): the records framed as the
// copied response frames them, every response's lease given back, and
// with fetch.sendfile.enable the acquired batches sent from their files
// on plaintext connections, and only there.

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
	{
		Name:  "share-fetch-sendfile-ranges-dropped",
		Rule:  "a ShareFetch's acquired batches keep the file ranges their reads named, for sendfile",
		Edits: []edit{{File: "kafka/fetchwire/batches.go", Old: "return w.Mark(batches, w.locate(batches), size)", New: "return w.Mark(batches, nil, size)"}},
		Tests: []testRun{{Pkg: "./kafka/fetchwire/", Run: "TestMarkReadLocated"}, {Pkg: "./kafka/", Run: "TestShareFetchSendfile"}},
	},
	{
		Name: "share-fetch-reads-unlocated",
		Rule: "a ShareFetch's reads tell its response where their batches lie in files",
		Edits: []edit{{File: "kafka/share_groups.go",
			Old: "resolver.ReadUncommitted, w.Lease())\n\tw.Located(res.Batches, res.Srcs)",
			New: "resolver.ReadUncommitted, w.Lease())\n\tw.Located(res.Batches, nil)"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestShareFetchSendfile"}},
	},
	{
		Name:  "share-fetch-sendfile-never",
		Rule:  "with fetch.sendfile.enable a ShareFetch on a plaintext connection reads pinned, for sendfile, as a Fetch does",
		Edits: []edit{{File: "kafka/78_share_fetch.go", Old: "wire := newWire(rc.conn)", New: "wire := newWire(nil)"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestShareFetchSendfile"}},
	},
	{
		Name:  "fetch-wire-pins-on-tls",
		Rule:  "a connection that cannot send files (TLS) reads without pins, its batches written from the checked buffers",
		Edits: []edit{{File: "kafka/fetch_response.go", Old: "resolver.NewLease(conn.sendfile())", New: "resolver.NewLease(true)"}},
		Tests: []testRun{{Pkg: "./kafka/", Run: "TestShareFetchSendfile"}},
	},
}
