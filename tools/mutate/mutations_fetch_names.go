package main

// Deliberate breaks of naming a fetch session's partitions by topic id
// (kafka/fetch sessionItems): a partition answered under another topic's
// name, or every partition looked up again.

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "fetch-session-names-first-topic-only",
			Rule:  "fetch: every item of a session keyed by topic id carries its own topic's name",
			Edits: []edit{{File: "kafka/fetch/items.go", Old: "if i == 0 || sp.Key.ID != order[i-1].Key.ID || sp.Key.Topic != order[i-1].Key.Topic {", New: "if i == 0 {"}},
			Tests: []testRun{{Pkg: "./kafka/fetch/", Run: "TestSessionItemsNamedPerTopic"}},
		},
		mutation{
			Name:  "fetch-session-names-every-partition",
			Rule:  "fetch: a session's run of one topic's partitions is looked up once",
			Edits: []edit{{File: "kafka/fetch/items.go", Old: "if i == 0 || sp.Key.ID != order[i-1].Key.ID || sp.Key.Topic != order[i-1].Key.Topic {", New: "if true {"}},
			Tests: []testRun{{Pkg: "./kafka/fetch/", Run: "TestSessionItemsNamedPerTopic"}},
		},
	)
}
