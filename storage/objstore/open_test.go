package objstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

func TestParse(t *testing.T) {
	good := []string{
		"file:///var/lib/kgateway/objects",
		"file://localhost/var/lib/kgateway/objects",
		"file:///tmp/x?prefix=p/",
		"s3://bucket",
		"s3://bucket/",
		"s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true",
	}
	for _, u := range good {
		if _, err := Parse(u); err != nil {
			t.Errorf("Parse(%q): %v", u, err)
		}
	}
	bad := map[string]string{ // URL -> a word the error must hold
		"":                            "no scheme",
		"/var/lib/objects":            "no scheme",
		"gs://bucket":                 `unknown scheme "gs"`,
		"azblob://container":          `unknown scheme "azblob"`,
		"file://./relative":           "no host",
		"file://":                     "absolute path",
		"s3://":                       "no bucket",
		"s3://?region=us-east-1":      "no bucket",
		"s3://bucket/dir/":            "prefix parameter",
		"s3://AKIAEXAMPLE:hunter2@b":  "credentials in the URL",
		"s3://AKIAEXAMPLE@bucket":     "credentials in the URL",
		"file://user:hunter2@/tmp/x":  "credentials in the URL",
		"s3://b\x7f:hunter2@x?region": "not a URL",
	}
	for u, want := range bad {
		_, err := Parse(u)
		if err == nil {
			t.Errorf("Parse(%q) = nil error, want one about %q", u, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error about %q", u, err, want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Parse(%q) error leaks the password: %v", u, err)
		}
	}
}

// TestOpenS3Parameters opens s3 URLs without contacting anything: opening
// only builds the client, so the URL form must be accepted and
// unknown or malformed parameters refused.
func TestOpenS3Parameters(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	good := []string{
		"s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true",
		"s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&s3ForcePathStyle=true&disable_https=true",
		"s3://bucket?region=eu-west-1&prefix=kgw/&request_checksum_calculation=when_required",
	}
	for _, u := range good {
		b, err := Open(ctx, u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		b.Close()
	}
	bad := map[string]string{
		"s3://bucket?region=us-east-1&colour=blue":        "colour",
		"s3://bucket?region=us-east-1&use_path_style=yes": "use_path_style",
		"s3://bucket?region=us-east-1&disable_https=2":    "disable_https",
	}
	for u, want := range bad {
		b, err := Open(ctx, u)
		if err == nil {
			b.Close()
			t.Errorf("Open(%q) = nil error, want one about %q", u, want)
			continue
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q) = %v, want an error about %q without the secret", u, err, want)
		}
	}
}

// TestOpenFileCreatesDir opens a file:// store whose directory does not
// exist yet and round-trips objects through it.
func TestOpenFileCreatesDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a", "objects")
	b, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("Open did not create %s: %v", dir, err)
	}
	roundTrip(t, b)
	if err := Check(ctx, b); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// TestOpenFileTempBesideObjects: file:// writes its temporary files next
// to the objects, not in os.TempDir, whose rename into a store on another
// file system would fail. TMPDIR points nowhere, so a write through
// os.TempDir fails.
func TestOpenFileTempBesideObjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "missing"))
	b, err := Open(ctx, "file://"+filepath.Join(dir, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatalf("write with TMPDIR missing: %v", err)
	}
}

// TestOpenFilePrefix puts every key of a prefix= store under the prefix.
func TestOpenFilePrefix(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(ctx, "file://"+dir+"?prefix=node1/")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node1", "k")); err != nil {
		t.Fatalf("object not under the prefix: %v", err)
	}
}

// TestCheckLeavesNoProbe: a passing Check deletes its probe object.
func TestCheckLeavesNoProbe(t *testing.T) {
	ctx := context.Background()
	b, err := Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		if err := Check(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if keys := listAll(t, b, ""); len(keys) != 0 {
		t.Fatalf("Check left objects behind: %v", keys)
	}
}

// TestCheckFailsOnBrokenStore: a store that cannot take a write fails the
// check (as root, permissions do not stop a write, so the directory is
// replaced by a regular file).
func TestCheckFailsOnBrokenStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "objects")
	b, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, b); err == nil {
		t.Fatal("Check passed on a store whose directory is a file")
	}
}

// roundTrip puts, gets, range-reads, lists and deletes objects in b; the
// S3 end-to-end test runs it against a real server too.
func roundTrip(t *testing.T, b *blob.Bucket) {
	t.Helper()
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	for _, k := range []string{"ledgers/t-0/1", "ledgers/t-0/2", "ledgers/t-1/1"} {
		if err := b.WriteAll(ctx, k, data, nil); err != nil {
			t.Fatalf("write %s: %v", k, err)
		}
	}
	got, err := b.ReadAll(ctx, "ledgers/t-0/1")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	attrs, err := b.Attributes(ctx, "ledgers/t-0/1")
	if err != nil || attrs.Size != int64(len(data)) {
		t.Fatalf("attributes: %+v, %v", attrs, err)
	}
	const off, n = 1<<20 - 100, 64 // a range that ends 36 bytes before the end
	r, err := b.NewRangeReader(ctx, "ledgers/t-0/1", off, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(part, data[off:off+n]) {
		t.Fatalf("range read: %q, %v", part, err)
	}
	if keys := listAll(t, b, "ledgers/t-0/"); strings.Join(keys, ",") != "ledgers/t-0/1,ledgers/t-0/2" {
		t.Fatalf("list ledgers/t-0/: %v", keys)
	}
	for _, k := range []string{"ledgers/t-0/1", "ledgers/t-0/2", "ledgers/t-1/1"} {
		if err := b.Delete(ctx, k); err != nil {
			t.Fatalf("delete %s: %v", k, err)
		}
	}
	if _, err := b.ReadAll(ctx, "ledgers/t-0/1"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("read after delete: %v, want NotFound", err)
	}
	if keys := listAll(t, b, "ledgers/"); len(keys) != 0 {
		t.Fatalf("list after delete: %v", keys)
	}
}

func listAll(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		keys = append(keys, obj.Key)
	}
}
