package auth

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// The SCRAM credential store: concurrent updates (each locks, re-reads and replaces the file)
// lose nothing, and a second Store over the same directory, as another
// process would have, sees every change at its next lookup.
func TestStoreConcurrentUpdates(t *testing.T) {
	dir := t.TempDir()
	reader := OpenStore(dir)
	if _, ok, err := reader.Lookup("u0", ScramSHA256); ok || err != nil {
		t.Fatalf("empty store: ok %v err %v", ok, err)
	}
	// A password no base64 salt or key could contain by chance (a short one,
	// like "pw", turns up in random base64 now and then).
	const password = "plain-text-password-never-stored"
	c, err := NewCredential(ScramSHA256, []byte(password), MinIterations)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A Store per writer: each is like a separate process.
			if err := OpenStore(dir).SetCredential(fmt.Sprintf("u%d", i), ScramSHA256, c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	names, err := reader.UserNames()
	if err != nil || len(names) != n {
		t.Fatalf("users %v err %v, want %d", names, err, n)
	}
	if err := OpenStore(dir).DeleteCredential("u3", ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := reader.Lookup("u3", ScramSHA256); ok {
		t.Fatal("a deleted user is still found")
	}
	if err := reader.DeleteCredential("u3", ""); err == nil {
		t.Fatal("deleting a missing user succeeded")
	}
	b, err := os.ReadFile(reader.Path())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), password) {
		t.Fatal("the store file holds the password")
	}
	if fi, _ := os.Stat(reader.Path()); fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("store file mode %v is readable by others", fi.Mode())
	}
}
