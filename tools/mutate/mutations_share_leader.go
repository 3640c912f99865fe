package main

// Deliberate breaks of the share leader side in cluster mode
// (kafka/share states.go), in a file of their own.

func init() { mutations = append(mutations, shareLeaderMutations...) }

var shareLeaderMutations = []mutation{
	{
		Name: "share-leader-cache-replaced-by-older-read",
		Rule: "leader writes before answers: a revalidating read older than the leader's own later write does not replace its cached state",
		Edits: []edit{{File: "kafka/share/states.go",
			Old: "(cur.version == version || version != 0 && cur.version > version)",
			New: "(cur.version == version || false && version != 0 && cur.version > version)"}},
		Tests: []testRun{{Pkg: "./kafka/share/", Run: "TestLeaderKeepsStateNewerThanItsRead"}},
	},
}
