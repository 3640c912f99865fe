package main

// A deliberate break of the object tier's cached read (tier B5).

func init() {
	mutations = append(mutations, mutation{
		Name:  "cached-tier-read-not-revalidated",
		Rule:  "tier B5: a read served from the chunk cache without a pin still revalidates its candidate (a deleted object's candidate is stale)",
		Edits: []edit{{File: "tier/read.go", Old: "\tif err := t.revalidate(c, hdrs); err != nil {\n\t\tt.stats.stale.Add(1)\n\t\treturn nil, true, err\n\t}\n", New: ""}},
		Tests: []testRun{{Pkg: "./tier/", Run: "TestCachedReadTakesNoPin"}},
	})
}
