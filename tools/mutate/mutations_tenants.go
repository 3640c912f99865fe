package main

// Deliberate breaks of the per-principal bounds (docs/DESIGN.md
// "Bounds": kafka/tenancy, kafka/txn owners, the topic creator in the
// catalog), in a file of their own.

func init() { mutations = append(mutations, tenantMutations...) }

var tenantMutations = []mutation{
	{
		Name:  "partitions-per-principal-unbounded",
		Rule:  "tenancy: a principal's topics hold at most partitions.max.per.principal partitions",
		Edits: []edit{{File: "kafka/tenancy/topics.go", Old: "\tif principal == \"\" || max <= 0 {", New: "\tif true {"}},
		Tests: []testRun{
			{Pkg: "./kafka/tenancy/", Run: "TestPartitionRoom"},
			{Pkg: "./test/", Run: "TestPerPrincipalPartitionBound"},
		},
	},
	{
		Name:  "topic-creator-not-persisted",
		Rule:  "tenancy: a topic's creator is in its durable record, so a restart keeps the principal's partitions counted",
		Edits: []edit{{File: "resolver/catalog.go", Old: "r.store.ApplyMeta(encodeTopic(name, id, logs, configs, creator), putCounter", New: "r.store.ApplyMeta(encodeTopic(name, id, logs, configs, \"\"), putCounter"}},
		Tests: []testRun{{Pkg: "./test/", Run: "TestPerPrincipalPartitionBound"}},
	},
	{
		Name:  "txn-owner-not-durable",
		Rule:  "the transaction bounds: a transactional id's owner is recorded durably, so a restart keeps it counted against its creator",
		Edits: []edit{{File: "kafka/txn/init.go", Old: "\tc.storeOwner(t)\n", New: "\n"}},
		Tests: []testRun{
			{Pkg: "./kafka/txn/", Run: "TestPerPrincipalBounds"},
			{Pkg: "./test/", Run: "TestPerPrincipalOwnershipSurvivesRestart"},
		},
	},
	{
		Name:  "group-owner-not-durable",
		Rule:  "tenancy: a group's owner is recorded durably, so a restart keeps it counted against its creator",
		Edits: []edit{{File: "kafka/tenancy/groups.go", Old: "\t\t_ = g.store.PutOwner(offsets.OwnerGroup, id, principal)", New: "\t\t_ = offsets.OwnerGroup"}},
		Tests: []testRun{
			{Pkg: "./kafka/tenancy/", Run: "TestGroupsOwnersDurable"},
			{Pkg: "./test/", Run: "TestPerPrincipalOwnershipSurvivesRestart"},
		},
	},
}
