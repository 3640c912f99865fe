package main

// Deliberate breaks of the share fetches' wake-ups (kafka/share
// waiters.go: one waiting fetch woken per freed range, unused wakes passed
// on) and of the state writer's linger for the fetches a change woke
// (writer.go).

func init() { mutations = append(mutations, shareWakeMutations...) }

var shareWakeMutations = []mutation{
	{
		Name:  "share-ack-wakes-every-waiter",
		Rule:  "the in-flight window bound: an acknowledgement wakes only as many waiting fetches as the records it freed and the slots the window moved by cover",
		Edits: []edit{{File: "kafka/share/partition.go", Old: "\t\twoke = p.wakeRoomLocked(room, true)", New: "\t\twoke = p.wakeRoomLocked(room+1<<30, true)"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestAckWakesOneFetchPerFreedRange"}},
	},
	{
		Name:  "share-unused-wake-dropped",
		Rule:  "the in-flight window bound: a woken fetch that ends without using its wake passes it on to the next waiting fetch",
		Edits: []edit{{File: "kafka/share/waiters.go", Old: "\t\tif w.woken {\n\t\t\t_, owing := p.useWakeLocked(w)", New: "\t\tif false && w.woken {\n\t\t\t_, owing := p.useWakeLocked(w)"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestUnusedWakePassesOn"}},
	},
	{
		Name:  "share-acquisition-leaves-waiters-asleep",
		Rule:  "the in-flight window bound: an acquisition that leaves records acquirable wakes the next waiting fetches for them",
		Edits: []edit{{File: "kafka/share/waiters.go", Old: "\tif n := p.acquirableLocked(maxLocks, bound) - p.promised; n > 0 {", New: "\tif n := p.acquirableLocked(maxLocks, bound) - p.promised; n > 1<<30 {"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestUnusedWakePassesOn"}},
	},
	{
		Name:  "share-writer-no-linger",
		Rule:  "the state writer's write waits, at most its linger, for the acquisitions of the fetches its states woke",
		Edits: []edit{{File: "kafka/share/writer.go", Old: "\tif w.owed > 0 {\n\t\tw.lingerLocked()", New: "\tif false && w.owed > 0 {\n\t\tw.lingerLocked()"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestStateWriterLingersForWokenFetches"}},
	},
	{
		Name:  "share-promised-records-open-to-all",
		Rule:  "the in-flight window bound: records freed for a woken fetch are not read by a fetch that was not woken",
		Edits: []edit{{File: "kafka/share/waiters.go", Old: "\treturn p.promised > 0 && p.acquirableLocked(maxLocks, bound) <= p.promised", New: "\treturn false && p.promised > 0 && p.acquirableLocked(maxLocks, bound) <= p.promised"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestFreedRecordsPromisedToWokenFetch"}},
	},
	{
		Name:  "share-reading-fetch-claims-nothing",
		Rule:  "the in-flight window bound: a fetch reading the log claims the records it reads for, and another fetch meanwhile waits",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\tp.promised += t.claim\n", New: "\tp.promised += 0 * t.claim\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestReadingFetchClaimsWhatItReads"}},
	},
}
