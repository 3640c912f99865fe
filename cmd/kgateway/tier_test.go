package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/test/s3server"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestVerifyAndExplainTiered: with object.store.url, verify checks every
// published object against its SHA-256s and index (and finds a flipped
// byte), explain shows the candidates and picks the object for an
// offloaded offset, and /metrics counts the uploads: over a file://
// store, and over a real S3 server (test/s3server) whose objects lie as
// files under its directory.
func TestVerifyAndExplainTiered(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		objects := t.TempDir()
		testVerifyAndExplainTiered(t, "file://"+objects, objects)
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3server.Start(t)
		testVerifyAndExplainTiered(t, srv.URL, filepath.Join(srv.Dir, s3server.Bucket))
	})
}

func testVerifyAndExplainTiered(t *testing.T, url, objects string) {
	dir := t.TempDir()
	g := startTestWith(t, dir, func(c *Config) { c.ObjectStoreURL, c.RemoteLogTaskMs = url, 10 })
	cl := newClient(t, g)
	s := func(v string) *string { return &v }
	resp, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 1, 1, map[string]*string{
		"remote.storage.enable": s("true"), "local.retention.ms": s("0"), "segment.bytes": s("200")}, "tiered")
	if err != nil || resp.Err != nil {
		t.Fatal(err, resp.Err)
	}
	for i := range 20 {
		produce(t, cl, "tiered", fmt.Sprintf("value-%03d-%s", i, strings.Repeat("x", 60)))
	}
	ctx := testCtx(t)
	for objectFiles(t, objects) < 5 {
		if ctx.Err() != nil {
			t.Fatal("nothing uploaded before the deadline")
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	if _, body := httpGet(t, g, "/metrics"); !strings.Contains(body, "kgateway_tier_uploads_total") {
		t.Fatalf("no tier metrics:\n%.2000s", body)
	}
	g.Close()
	code, out, errOut := runCmd("explain", "--data-dir", dir, "--object-store-url", url, "tiered", "0", "0")
	if code != 0 || !strings.Contains(out, "target: * object ") || !strings.Contains(out, "state published") ||
		!strings.Contains(out, "in object") {
		t.Fatalf("explain: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd("verify", "--data-dir", dir, "--object-store-url", url)
	if code != 0 || !strings.Contains(out, "0 problems") || !strings.Contains(out, "checked ") || strings.Contains(out, "checked 0 objects") {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	var first string
	filepath.WalkDir(objects, func(p string, d os.DirEntry, err error) error {
		if err == nil && first == "" && strings.HasSuffix(p, ".kgo") {
			first = p
		}
		return err
	})
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b[40] ^= 1 // inside the first frame
	if err := os.WriteFile(first, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCmd("verify", "--data-dir", dir, "--object-store-url", url)
	if code != 1 || !strings.Contains(out, "CORRUPT OBJECT") || !strings.Contains(out, "1 problems") {
		t.Fatalf("verify of a corrupt object: exit %d\n%s", code, out)
	}
}

func objectFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".kgo") {
			n++
		}
		return err
	})
	return n
}
