package main

// Deliberate breaks of how the tests' S3 server (test/s3server) is set
// up, in a file of their own.

func init() { mutations = append(mutations, testStoreMutations...) }

var testStoreMutations = []mutation{
	{
		Name:  "s3server-sidecar-always",
		Rule:  "the tests' S3 server keeps an object's metadata in its file's extended attributes where the file system takes them, not in sidecar files (one inode per PUT, not six)",
		Edits: []edit{{File: "test/s3server/server.go", Old: "\tif !Xattrs(dir) {\n", New: "\tif !Xattrs(dir) || true {\n"}},
		Tests: []testRun{{Pkg: "./test/s3server/", Run: "TestMetadataInXattrs"}},
	},
	{
		Name:  "s3server-dir-in-tmp",
		Rule:  "the tests' S3 server keeps its directory away from /tmp by default, where every test's deletes make a new inode cost up to milliseconds",
		Edits: []edit{{File: "test/s3server/server.go", Old: "\t\tbase = QuietDir\n", New: "\t\tbase = os.TempDir()\n"}},
		Tests: []testRun{{Pkg: "./test/s3server/", Run: "TestDirAwayFromTmp"}},
	},
}
