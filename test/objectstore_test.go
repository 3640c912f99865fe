package test

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/test/s3server"
)

// objectStore is the object.store.url of a test: a file:// directory, or
// a real S3-compatible server on loopback (versitygw, test/s3server).
type objectStore struct {
	kind string
	url  string
	// dir holds the objects as files, named by their keys (versitygw's
	// POSIX backend keeps a bucket as a directory): a test counts them
	// there, or damages one to make the store lie.
	dir string
	srv *s3server.Server // nil for file://
	// env is what a kgateway child process needs to reach the store.
	env []string
}

// objectStoreKinds are the backends the tier's end-to-end tests run on.
var objectStoreKinds = []string{"file", "s3"}

func newObjectStore(t *testing.T, kind string) objectStore {
	t.Helper()
	if kind == "file" {
		dir := t.TempDir()
		return objectStore{kind: kind, url: "file://" + dir, dir: dir}
	}
	srv := s3server.Start(t)
	return objectStore{kind: kind, url: srv.URL, dir: filepath.Join(srv.Dir, s3server.Bucket), srv: srv, env: s3server.Env()}
}

// forEachObjectStore runs fn as one subtest per backend.
func forEachObjectStore(t *testing.T, fn func(t *testing.T, objs objectStore)) {
	for _, kind := range objectStoreKinds {
		t.Run(kind, func(t *testing.T) { fn(t, newObjectStore(t, kind)) })
	}
}
