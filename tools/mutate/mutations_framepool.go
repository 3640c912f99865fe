package main

// Deliberate breaks of pooled request frames (storage "Pooled frames",
// bufpool "The last holder returns it").

func init() {
	mutations = append(mutations,
		mutation{
			Name:  "leased-tail-read-holds-no-frame",
			Rule:  "storage pooled frames: a leased read served from the tail cache holds its pooled frame until the lease is released (a fetch response still being written)",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\t\t\t\tlease.hold(f)\n", New: "\t\t\t\t\t_ = lease\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
		mutation{
			Name:  "unleased-tail-read-keeps-no-frame",
			Rule:  "storage pooled frames: a read without a lease served from the tail cache keeps its pooled frame from the pool for good",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\t\t\t} else {\n\t\t\t\t\tf.Keep()\n", New: "\t\t\t\t} else {\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
		mutation{
			Name:  "tail-cache-frame-released-before-eviction",
			Rule:  "storage pooled frames: a cached entry holds its pooled frame until it has left the cache",
			Edits: []edit{{File: "storage/tailcache.go", Old: "\t\tframe = b.frame\n\t\tframe.Acquire()\n", New: "\t\tframe = b.frame\n"}},
			Tests: []testRun{{Pkg: "./storage/", Run: "TestPooledFrameHeldUntilLastHolder"}},
		},
	)
}
