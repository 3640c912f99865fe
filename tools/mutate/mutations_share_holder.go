package main

// Mutations of the share coordinator's answer to a fetch whose member
// holds records in the partition it can acquire nothing more from
// (kafka/share/partition.go answerHolderLocked).

func init() { mutations = append(mutations, shareHolderMutations...) }

var shareHolderMutations = []mutation{
	{
		Name:  "share-holder-first-fetch-waits",
		Rule:  "the in-flight window bound: a holder's first fetch since it was given records, finding nothing to acquire, is answered at once",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\tif answerNow {\n", New: "\t\tif false && answerNow {\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareHolderFetchAtHighWatermarkAnswersAtOnce|TestShareFetchOnOwnFullWindowWaitsBriefly"}},
	},
	{
		Name:  "share-holder-short-poll-only-on-full-window",
		Rule:  "the in-flight window bound: a holder's fetch polls ownBlockWait at most whatever it finds nothing for (a full window, promised records, the high watermark)",
		Edits: []edit{{File: "kafka/share/fetch.go", Old: "\t\treturn acquisition{nextExpiry: next, ownBlock: holds, answerNow: now, owing: owing}\n", New: "\t\treturn acquisition{nextExpiry: next, ownBlock: holds && !ok, answerNow: now && !ok, owing: owing}\n"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestShareHolderFetchAtHighWatermarkAnswersAtOnce"}},
	},
}
