package s3server_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/test/s3server"
	"gocloud.dev/blob"
	"golang.org/x/sys/unix"
)

// TestMakefilePin: `make deps` installs the version the tests look for.
func TestMakefilePin(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VERSITYGW_VERSION := (\S+)$`).FindSubmatch(mk)
	if m == nil || string(m[1]) != s3server.Version {
		t.Fatalf("Makefile VERSITYGW_VERSION = %q, s3server.Version = %s", m, s3server.Version)
	}
}

// TestStopRestart: a stopped server refuses requests; restarted, it serves
// the same objects on the same URL. Objects are files under Dir/Bucket.
func TestStopRestart(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := []byte("kept across a restart")
	if err := b.WriteAll(ctx, "dir/obj", want, nil); err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(srv.Dir, s3server.Bucket, "dir", "obj"))
	if err != nil || !bytes.Equal(onDisk, want) {
		t.Fatalf("object file under Dir: %q, %v", onDisk, err)
	}
	srv.Stop()
	if err := objstore.Check(ctx, b); err == nil {
		t.Fatal("Check passed against a stopped server")
	}
	srv.Restart()
	got, err := b.ReadAll(ctx, "dir/obj")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after restart: %q, %v", got, err)
	}
	if err := objstore.Check(ctx, b); err != nil {
		t.Fatalf("Check after restart: %v", err)
	}
}

// TestTwoServers: servers of one process are independent.
func TestTwoServers(t *testing.T) {
	a, b := s3server.Start(t), s3server.Start(t)
	if a.URL == b.URL {
		t.Fatalf("two servers share %s", a.URL)
	}
	ctx := context.Background()
	ba, err := objstore.Open(ctx, a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ba.Close()
	bb, err := objstore.Open(ctx, b.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	if err := ba.WriteAll(ctx, "only-in-a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := bb.Exists(ctx, "only-in-a"); err != nil || ok {
		t.Fatalf("object of server a in server b: %v, %v", ok, err)
	}
}

// TestCredentialsFromEnvironment: objstore.Open signs with the credentials
// of the AWS environment, so a wrong secret there is refused by the server.
func TestCredentialsFromEnvironment(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-"+s3server.SecretKey)
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := objstore.Check(ctx, b); err == nil {
		t.Fatal("Check passed with a wrong secret key in the environment")
	}
}

// TestPauseResume: a paused server answers nothing (a request times out);
// resumed, it serves again.
func TestPauseResume(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv.Pause()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := b.WriteAll(short, "k", []byte("v"), nil); err == nil {
		t.Fatal("a paused server took a write")
	}
	srv.Resume()
	if err := objstore.Check(ctx, b); err != nil {
		t.Fatalf("Check after resume: %v", err)
	}
}

// TestKeepAlive: the server keeps a connection open between requests, as
// a real object store does (Args): after the first, every PUT and GET of
// one client goes over a connection already open.
func TestKeepAlive(t *testing.T) {
	srv := s3server.Start(t)
	b, err := objstore.Open(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var fresh, reused atomic.Int32
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			reused.Add(1)
		} else {
			fresh.Add(1)
		}
	}})
	for i := range 5 {
		key := fmt.Sprintf("k/%d", i)
		if err := b.WriteAll(ctx, key, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ReadAll(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if fresh.Load() != 1 || reused.Load() != 9 {
		t.Fatalf("%d requests on a new connection, %d on one already open; want 1 and 9", fresh.Load(), reused.Load())
	}
}

// TestMetadataInXattrs: where the file system takes user extended
// attributes, an object's metadata is kept in its file's attributes
// (versitygw's default), not in sidecar files: a PUT creates one inode,
// not six (Args). The object still reads back with its content type.
func TestMetadataInXattrs(t *testing.T) {
	srv := s3server.Start(t)
	if !s3server.Xattrs(srv.Dir) {
		t.Skipf("%s takes no user extended attributes: metadata in sidecar files", srv.Dir)
	}
	ctx := context.Background()
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, "dir/obj", []byte("attributes"), &blob.WriterOptions{ContentType: "application/x-kgw"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(srv.Dir, s3server.Bucket, "dir", "obj")
	if n, err := unix.Getxattr(path, "user.etag", nil); err != nil || n == 0 {
		t.Fatalf("object file has no user.etag attribute: %d bytes, %v", n, err)
	}
	var sidecars []string
	filepath.WalkDir(filepath.Dir(srv.Dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "dir/obj/") {
			sidecars = append(sidecars, p)
		}
		return nil
	})
	if len(sidecars) > 0 {
		t.Fatalf("sidecar metadata files for the object: %v", sidecars)
	}
	attrs, err := b.Attributes(ctx, "dir/obj")
	if err != nil || attrs.ContentType != "application/x-kgw" {
		t.Fatalf("attributes read back: %+v, %v", attrs, err)
	}
}

// TestDirAwayFromTmp: with neither KGW_S3SERVER_DIR nor TMPDIR set, a
// server's directory is under QuietDir, away from /tmp's churn of
// inodes (dataRoot), and it is removed when the test ends.
func TestDirAwayFromTmp(t *testing.T) {
	if st, err := os.Stat(s3server.QuietDir); err != nil || !st.IsDir() || unix.Access(s3server.QuietDir, unix.W_OK) != nil {
		t.Skipf("%s is not a writable directory", s3server.QuietDir)
	}
	t.Setenv(s3server.EnvDir, "")
	t.Setenv("TMPDIR", "")
	os.Unsetenv("TMPDIR")
	var dir string
	t.Run("server", func(t *testing.T) {
		dir = s3server.Start(t).Dir
		if !strings.HasPrefix(dir, s3server.QuietDir+"/") {
			t.Fatalf("server directory %s is not under %s", dir, s3server.QuietDir)
		}
	})
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Fatalf("server directory %s left after its test: %v", filepath.Dir(dir), err)
	}
}
