package objstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/storage/objstore/objstoretest"
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
		if _, err := objstore.Parse(u); err != nil {
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
		_, err := objstore.Parse(u)
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
// only builds the client, so the documented URL form must be accepted and
// unknown or malformed parameters refused.
func TestOpenS3Parameters(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
	// No region from the environment or a profile.
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	good := []string{
		"s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true",
		"s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&s3ForcePathStyle=true&disable_https=true",
		"s3://bucket?region=eu-west-1&prefix=kgw/&request_checksum_calculation=when_required",
		"s3://bucket?region=us-east-1&awssdk=v2",
	}
	for _, u := range good {
		b, err := objstore.Open(ctx, u)
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
		"s3://bucket?endpoint=http://127.0.0.1:1":         "no region",
	}
	for u, want := range bad {
		b, err := objstore.Open(ctx, u)
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
	b, err := objstore.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("Open did not create %s: %v", dir, err)
	}
	objstoretest.RoundTrip(t, b)
	if err := objstore.Check(ctx, b); err != nil {
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
	b, err := objstore.Open(ctx, "file://"+filepath.Join(dir, "objects"))
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
	b, err := objstore.Open(ctx, "file://"+dir+"?prefix=node1/")
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
	b, err := objstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for range 3 {
		if err := objstore.Check(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if keys := objstoretest.List(t, b, ""); len(keys) != 0 {
		t.Fatalf("Check left objects behind: %v", keys)
	}
}

// TestCheckFailsOnBrokenStore: a store that cannot take a write fails the
// check (as root, permissions do not stop a write, so the directory is
// replaced by a regular file).
func TestCheckFailsOnBrokenStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "objects")
	b, err := objstore.Open(ctx, "file://"+dir)
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
	if err := objstore.Check(ctx, b); err == nil {
		t.Fatal("Check passed on a store whose directory is a file")
	}
}

// TestOpenS3RegionFromEnv: without region= the region may come from the
// AWS environment.
func TestOpenS3RegionFromEnv(t *testing.T) {
	t.Setenv("AWS_REGION", "eu-west-1")
	b, err := objstore.Open(context.Background(), "s3://bucket?endpoint=http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}
