package main

// Deliberate breaks of pooled request frames (storage "Pooled frames",
// bufpool "The last holder returns it" and "Large buffers are kept, not
// pooled").

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "leased-tail-read-holds-no-frame",
			Rule:  "storage pooled frames: a leased read served from the tail cache holds its pooled frame until the lease is released (a fetch response still being written)",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\t\t\t\tlease.hold(f)\n", New: "\t\t\t\t\t_ = lease\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
		mutation{
			Name:  "unleased-tail-read-keeps-no-frame",
			Rule:  "storage pooled frames: a read without a lease served from the tail cache keeps its pooled frame from the pool for good",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\t\t\t} else {\n\t\t\t\t\tf.Keep()\n", New: "\t\t\t\t} else {\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
		mutation{
			Name:  "tail-cache-frame-released-before-eviction",
			Rule:  "storage pooled frames: a cached entry holds its pooled frame until it has left the cache",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\tframe = b.frame\n\t\tframe.Acquire()\n", New: "\t\tframe = b.frame\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
		mutation{
			Name:  "kept-frame-buffer-charged-as-its-class",
			Rule:  "request memory budget: a large frame read into a reused kept buffer is charged the buffer's whole capacity, not the frame's class",
			Edits: []edit{{File: "kafka/wire/frame.go", Old: "\t\t\t\twant = cap(full)\n", New: "\t\t\t\twant = bufpool.Cap(size)\n"}},
			Tests: []testRun{{Pkg: "./kafka/wire/", Run: "TestReadBodyReusesKeptBuffer"}},
		},
		mutation{
			Name:  "large-buffers-pooled-by-class-only",
			Rule:  "bufpool: a large buffer put back is kept across collections and reused by a Get of its class",
			Edits: []edit{{File: "bufpool/bufpool.go", Old: "\t\tkeep(b)\n\t\treturn\n", New: "\t\treturn\n"}},
			Tests: []testRun{{Pkg: "./bufpool/", Run: "TestLargeKept|TestLargeClassBoundary"}},
		},
		mutation{
			Name:  "frame-released-early-while-held",
			Rule:  "produce: a pooled request frame goes back before its writes are answered only when the store holds none of its batches (Pending.HoldsPayload)",
			Edits: []edit{{File: "kafka/produce/produce.go", Old: "\tearly := c.Frame != nil && settled && !held\n", New: "\tearly := c.Frame != nil && settled\n"}},
			Tests: []testRun{{Pkg: "./kafka/produce/", Run: "TestFrameReleasedBeforeSyncOnlyWhenNotHeld"}},
		},
		mutation{
			Name:  "frame-kept-until-answered",
			Rule:  "produce: a pooled request frame whose batches the store does not hold goes back as soon as they are written",
			Edits: []edit{{File: "kafka/produce/produce.go", Old: "\tearly := c.Frame != nil && settled && !held\n", New: "\tearly := c.Frame != nil && settled && !held && false\n"}},
			Tests: []testRun{{Pkg: "./kafka/produce/", Run: "TestFrameReleasedBeforeSyncOnlyWhenNotHeld"}},
		},
		mutation{
			Name:  "bulk-group-journaled",
			Rule:  "storage I15: a bulk lane's group is never journaled (its entries' payloads are let go at Write, Pending.HoldsPayload)",
			Edits: []edit{{File: "storage/commit.go", Old: "\tcase !group[0].bulk && c.s.j.wants(", New: "\tcase c.s.j.wants("}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkEntriesNotHeldNorJournaled"}},
		},
		mutation{
			Name:  "journaled-entry-payload-not-held",
			Rule:  "storage I15: with a journal, a main lane entry's payload is held until answered (Pending.HoldsPayload), so that a pooled request frame is not reused before the journal copies it",
			Edits: []edit{{File: "storage/append.go", Old: "\t\tp.payload, p.frame, p.holds = payload, frame, true\n", New: "\t\tp.payload, p.frame = payload, frame\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestBulkEntriesNotHeldNorJournaled"}},
		},
	)
}
