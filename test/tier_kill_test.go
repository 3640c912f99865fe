package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKillDuringUploads: kgateway with a file:// object store, and with a
// real S3 server, is killed
// (SIGKILL) while it produces and uploads segments of a tiered topic
// (local.retention.ms=0: sealed segments live only as objects once
// published). After each restart every acknowledged record reads back at
// its offset, densely, most of them from objects, and the crashed
// uploads' orphan objects are deleted: in the end every ledger has one
// object.
func TestKillDuringUploads(t *testing.T) { forEachObjectStore(t, testKillDuringUploads) }

func testKillDuringUploads(t *testing.T, objs objectStore) {
	dir, objects := t.TempDir(), objs.dir
	flags := []string{"--num-partitions", fmt.Sprint(killPartitions), "--log-segment-bytes", "4096",
		"--object-store-url", objs.url, "--remote-log-manager-task-interval-ms", "5"}
	all := map[string]recordPos{}
	for round := range 3 {
		p := startBinaryEnv(t, dir, objs.env, flags...)
		if round == 0 {
			createTieredTopic(t, p.addr)
		}
		before := countFiles(t, objects, ".kgo")

		deadline := time.Now().Add(testDeadline - 5*time.Second)
		produceUntil(t, p.addr, fmt.Sprintf("round%d", round), all, func() bool {
			if time.Now().After(deadline) {
				t.Fatalf("no uploads: %d objects, %d before\n%s", countFiles(t, objects, ".kgo"), before, p.stderr)
			}
			return countFiles(t, objects, ".kgo") >= before+6
		})
		p.cmd.Process.Kill()
		<-p.done
		p = startBinaryEnv(t, dir, objs.env, flags...)
		verifyAcked(t, p.addr, all)
		p.stop(t)
		t.Logf("round %d: killed with %d objects, %d acknowledged records verified", round, countFiles(t, objects, ".kgo"), len(all))
	}
	p := startBinaryEnv(t, dir, objs.env, flags...)
	defer p.stop(t)
	ctx := testCtx(t)
	for dup := duplicateObjects(t, objects); dup != ""; dup = duplicateObjects(t, objects) {
		if ctx.Err() != nil {
			t.Fatalf("orphan objects left after restarts: %s", dup)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, bounded by ctx
	}
	verifyAcked(t, p.addr, all)
}

func createTieredTopic(t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	configs := map[string]*string{"remote.storage.enable": ptr("true"), "local.retention.ms": ptr("0")}
	resp, err := kadm.NewClient(cl).CreateTopic(testCtx(t), killPartitions, 1, configs, killTopic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", killTopic, err, resp.Err)
	}
}

// duplicateObjects names a ledger with more than one object (an orphan
// beside its published copy), or "" when there is none.
func duplicateObjects(t *testing.T, dir string) string {
	t.Helper()
	seen := map[string]bool{}
	dup := ""
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".kgo") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		ledger := rel[:strings.LastIndex(rel, "-")]
		if seen[ledger] {
			dup = rel
		}
		seen[ledger] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dup
}
