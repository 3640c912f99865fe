package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An anchor must occur exactly once: missing or repeated text fails the
// check rather than mutating nothing or the wrong place.
func TestMutatedFilesAnchorOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("x := 1\ny := 2\ny := 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := mutatedFiles(root, []edit{{File: "a.go", Old: "x := 1", New: "x := 0"}})
	if err != nil || !strings.HasPrefix(string(got[filepath.Join(root, "a.go")]), "x := 0\n") {
		t.Fatalf("once: %q, %v", got, err)
	}
	for _, old := range []string{"z := 3", "y := 2"} {
		if _, err := mutatedFiles(root, []edit{{File: "a.go", Old: old, New: ""}}); err == nil {
			t.Fatalf("anchor %q accepted", old)
		}
	}
	if _, err := mutatedFiles(root, []edit{{File: "a.go", Old: "x := 1", New: "x := 1"}}); err == nil {
		t.Fatal("an edit that changes nothing accepted")
	}
}

// Every part of a test pattern must name a test of the package, so that a
// renamed test is noticed even when a sibling in the pattern remains.
func TestTestsExist(t *testing.T) {
	root := t.TempDir()
	src := "package p\n\nimport \"testing\"\n\nfunc TestKept(t *testing.T) {}\n\nfunc FuzzKept(f *testing.F) {}\n"
	if err := os.WriteFile(filepath.Join(root, "p_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := testsExist(root, testRun{Pkg: ".", Run: "TestKept|FuzzKept"}); err != nil {
		t.Fatal(err)
	}
	if err := testsExist(root, testRun{Pkg: ".", Run: "TestKept|TestRenamed"}); err == nil {
		t.Fatal("a pattern part that names no test was accepted")
	}
}
