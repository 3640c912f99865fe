package main

// Deliberate breaks of the file-system syncs of the store's group commit
// (storage commit.go syncFileSystem, doc.go "File-system syncs").

func init() { mutations = append(mutations, syncfsMutations...) }

var syncfsMutations = []mutation{
	{
		Name:  "syncfs-skipped",
		Rule:  "a group commit that syncs its file system instead of its files acknowledges only after that sync returned (D1)",
		Edits: []edit{{File: "storage/commit.go", Old: "\terr := c.s.fsSync.Sync()\n", New: "\tvar err error\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestFileSystemSyncMakesGroupDurable"}},
	},
	{
		Name:  "syncfs-error-fails-one-log",
		Rule:  "a failed file-system sync fails every log of its group: its error may be any file's",
		Edits: []edit{{File: "storage/commit.go", Old: "\tfor _, l := range files {\n\t\tl.fail(err)\n\t\tfailed[l] = err\n\t}\n", New: "\tfor _, l := range files {\n\t\tl.fail(err)\n\t\tfailed[l] = err\n\t\tbreak\n\t}\n"}},
		Tests: []testRun{{Pkg: "./storage/", Run: "TestFileSystemSyncFailureFailsGroup"}},
	},
}
