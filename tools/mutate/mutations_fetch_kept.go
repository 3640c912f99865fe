package main

// Deliberate breaks of a fetch session's kept long-poll Waiter
// (kafka/fetch kept.go, pollItems; kafka/fetchsession's Watch; resolver
// Waiter): wake-ups cleared after the first read instead of before it,
// a long poll registering an older binding than the one it read
// through, registrations left behind by a dropped or idle session or a
// forgotten partition, one Waiter shared by a session's concurrent
// requests; and a quiet partition answered through its last read's
// binding after that binding changed.

func init() {
	mutations = append(mutations,
		mutation{
			Name: "fetch-kept-waiter-reset-after-read",
			Rule: "fetch: a kept session Waiter forgets its wake-ups before the fetch's first read, never after it",
			Edits: []edit{
				{File: "kafka/fetch/kept.go", Old: "\tkw.w.Reset()\n\treturn kw\n", New: "\treturn kw\n"},
				{File: "kafka/fetch/fetch.go", Old: "\t\t\tw = kept.w\n", New: "\t\t\tw = kept.w\n\t\t\tw.Reset()\n"},
			},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterAppendDuringRead"}},
		},
		mutation{
			Name:  "fetch-kept-waiter-stays-on-old-partition",
			Rule:  "fetch: a long poll registers the binding each partition was read through (a re-created topic's new one)",
			Edits: []edit{{File: "kafka/fetch/kept.go", Old: "\t\th, err := it.resolve(f.Host)\n", New: "\t\th, err := it.resolve(f.Host)\n\t\tif b, ok := it.quiet.Binding.(resolver.Partition); ok {\n\t\t\th = b\n\t\t}\n"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterRecreatedTopic"}},
		},
		mutation{
			Name:  "fetch-kept-waiter-outlives-session",
			Rule:  "fetchsession: a dropped session's Watch is closed (its kept Waiter unregistered)",
			Edits: []edit{{File: "kafka/fetchsession/session.go", Old: "\t\tc.mu.dropped = append(c.mu.dropped, fs.watch)\n\t\tfs.watch = nil\n\t}\n\tc.mu.total", New: "\t\tfs.watch = nil\n\t}\n\tc.mu.total"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterDropped"}},
		},
		mutation{
			Name:  "fetch-kept-waiter-outlives-idle-session",
			Rule:  "fetchsession: an idle session's Watch is closed (no registration left by a client gone without closing)",
			Edits: []edit{{File: "kafka/fetchsession/session.go", Old: "\tc.closeIdleWatchesLocked(now)\n", New: ""}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterIdle"}},
		},
		mutation{
			Name:  "fetch-kept-waiter-keeps-forgotten",
			Rule:  "fetch: a kept session Waiter is unregistered from the partitions the session forgot",
			Edits: []edit{{File: "kafka/fetch/kept.go", Old: "\tw.Sweep()\n", New: ""}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterDropped"}},
		},
		mutation{
			Name:  "fetch-kept-waiter-shared-by-duplicates",
			Rule:  "fetch: one request at a time waits on a session's kept Waiter; a concurrent one waits on its own",
			Edits: []edit{{File: "kafka/fetch/kept.go", Old: "if k.mu.busy || k.mu.dropped {", New: "if k.mu.dropped {"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionKeptWaiterDuplicate"}},
		},
		mutation{
			Name:  "fetch-quiet-binding-unchecked",
			Rule:  "fetch: a quiet partition reuses its last read's binding only while that binding's Version is unchanged",
			Edits: []edit{{File: "kafka/fetch/read.go", Old: "if v, ok := h.Version(); !ok || v != q.Version {", New: "if _, ok := h.Version(); !ok {"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestFetchSessionQuietRecreatedTopic"}},
		},
		mutation{
			Name:  "fetch-companion-fired-by-own-name",
			Rule:  "fetch: a long poll of a companion topic is woken by its source's appends (its fired key is the source partition's)",
			Edits: []edit{{File: "kafka/fetch/items.go", Old: "\tif it.resolved && it.herr == nil {\n\t\treturn it.h.WatchKey()", New: "\tif false {\n\t\treturn it.h.WatchKey()"}},
			Tests: []testRun{{Pkg: "./kafka/", Run: "TestLongPollCompanionWokenBySourceAppend"}},
		},
	)
}
