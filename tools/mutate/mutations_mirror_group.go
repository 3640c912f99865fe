package main

// Deliberate breaks of the offsets store's grouped mirror writes
// (offsets O8, offsets/group.go), in a file of their own.

func init() { mutations = append(mutations, mirrorGroupMutations...) }

var mirrorGroupMutations = []mutation{
	{
		Name: "offsets-mirror-not-grouped",
		Rule: "offsets O8: writes queued behind one another are mirrored and applied as one group",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\tfor ; n < len(q.waiting); n++ {\n",
			New: "\tfor ; n < 1; n++ {\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorGroupsQueuedWrites"}},
	},
	{
		Name: "offsets-mirror-group-failure-leader-only",
		Rule: "offsets O8: if the mirror fails, every write of the group fails and nothing of it is applied",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\t\tif o != leader {\n\t\t\to.done <- err\n",
			New: "\t\tif o != leader {\n\t\t\to.done <- nil\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorGroupFailureFailsEveryWrite"}},
	},
	{
		Name: "offsets-mirror-group-reordered",
		Rule: "offsets O8: the mirror sees a group's batches in the order of application (the queue's)",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\t\tfor _, w := range group {\n\t\t\tif err := b.Apply(w.b, nil); err != nil {\n",
			New: "\t\tfor i := range group {\n\t\t\tw := group[len(group)-1-i]\n\t\t\tif err := b.Apply(w.b, nil); err != nil {\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorGroupsQueuedWrites"}},
	},
	{
		Name: "offsets-mirror-group-unbounded",
		Rule: "offsets O8: a group stays within Options.MirrorGroupEntries, what the mirror writes in one etcd transaction",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\t\tif entries+int(b.Count()) > s.opts.MirrorGroupEntries || size+b.Len() > s.opts.MirrorGroupBytes {\n",
			New: "\t\tif size+b.Len() > s.opts.MirrorGroupBytes {\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorGroupBounds"}},
	},
	{
		Name: "offsets-mirror-local-unsynced",
		Rule: "offsets O8: a mirrored group is applied locally synced unless the mirror is the one durable copy (MirrorDurable)",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\tif s.opts.MirrorDurable {\n\t\treturn pebble.NoSync\n\t}\n\treturn pebble.Sync\n",
			New: "\treturn pebble.NoSync\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorLocalSyncUnlessDurable"}},
	},
	{
		Name: "offsets-mirror-durable-synced",
		Rule: "offsets O8: a store whose mirror is its one durable copy (MirrorDurable) applies its groups unsynced",
		Edits: []edit{{File: "offsets/group.go",
			Old: "\t\treturn pebble.NoSync\n",
			New: "\t\treturn pebble.Sync\n"}},
		Tests: []testRun{{Pkg: "./offsets/", Run: "TestMirrorLocalSyncUnlessDurable"}},
	},
}
