package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// vetFlags are the analyzers go test runs before a test binary; a
// mutation that trips one of them would not get to its tests either.
var vetFlags = []string{"-atomic", "-bool", "-buildtags", "-directive", "-errorsas", "-ifaceassert", "-nilfunc", "-printf", "-stringintconv", "-tests"}

// checkAll runs check for every mutation matching filter, jobs at a
// time, and prints one line per mutation in list order. It reports
// whether every one passed.
func checkAll(root string, filter *regexp.Regexp, jobs int, timeout time.Duration) bool {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "kgateway-mutate-check-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	type outcome struct {
		err  error
		took time.Duration
	}
	var picked []int
	for i, m := range mutations {
		if filter.MatchString(m.Name) {
			picked = append(picked, i)
		}
	}
	results := make([]outcome, len(mutations))
	sem := make(chan struct{}, max(jobs, 1))
	var wg sync.WaitGroup
	for _, i := range picked {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			err := check(root, filepath.Join(tmp, fmt.Sprint(i)), mutations[i], timeout)
			results[i] = outcome{err, time.Since(t0)}
		}()
	}
	wg.Wait()
	failed := 0
	for _, i := range picked {
		status := "ok"
		if err := results[i].err; err != nil {
			status = "FAILED: " + err.Error()
			failed++
		}
		fmt.Printf("%-34s %5s  %s\n", mutations[i].Name, results[i].took.Round(100*time.Millisecond), status)
	}
	fmt.Printf("%d mutations checked in %s, %d failed\n", len(picked), time.Since(start).Round(100*time.Millisecond), failed)
	return failed == 0
}

// check verifies one mutation without running a test: its anchors occur
// exactly once (in order, as apply makes them), the packages it edits
// compile and vet with the edits applied (an overlay in dir), and each of
// its test patterns matches a test function of its package.
func check(root, dir string, m mutation, timeout time.Duration) error {
	mutated, err := mutatedFiles(root, m.Edits)
	if err != nil {
		return fmt.Errorf("anchor missing: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	overlay := map[string]string{}
	pkgs := map[string]bool{}
	for path, b := range mutated {
		repl := filepath.Join(dir, fmt.Sprintf("%d-%s", len(overlay), filepath.Base(path)))
		if err := os.WriteFile(repl, b, 0o644); err != nil {
			return err
		}
		overlay[path] = repl
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkgs["./"+filepath.ToSlash(rel)+"/"] = true
	}
	js, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		return err
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, js, 0o644); err != nil {
		return err
	}
	args := append([]string{"vet", "-overlay=" + ov}, vetFlags...)
	args = append(args, sortedKeys(pkgs)...)
	if out, err := goCmd(root, timeout, args...); err != nil {
		return fmt.Errorf("does not compile: %s", firstLine(out))
	}
	for _, tr := range m.Tests {
		if err := testsExist(root, tr); err != nil {
			return err
		}
	}
	return nil
}

// mutatedFiles applies edits in memory to the files under root and
// returns the new contents by absolute path.
func mutatedFiles(root string, edits []edit) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, e := range edits {
		path := filepath.Join(root, e.File)
		b, ok := out[path]
		if !ok {
			var err error
			if b, err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
		if e.Old == e.New {
			return nil, fmt.Errorf("%s: the edit replaces %q with itself", e.File, e.Old)
		}
		if n := strings.Count(string(b), e.Old); n != 1 {
			return nil, fmt.Errorf("%s: the text to replace occurs %d times, want 1: %q", e.File, n, e.Old)
		}
		out[path] = []byte(strings.Replace(string(b), e.Old, e.New, 1))
	}
	return out, nil
}

// testsExist reports an error unless tr.Run matches a Test or Fuzz
// function declared in a _test.go file of tr.Pkg's directory. go test
// matches -run against each top-level name; an alternation matches when
// one of its parts does, and every part must name something, so that a
// renamed test is noticed even when its sibling remains.
func testsExist(root string, tr testRun) error {
	names, err := testNames(filepath.Join(root, filepath.FromSlash(tr.Pkg)))
	if err != nil {
		return err
	}
	for _, part := range strings.Split(tr.Run, "|") {
		re, err := regexp.Compile(part)
		if err != nil {
			return fmt.Errorf("%s -run %q: %w", tr.Pkg, tr.Run, err)
		}
		found := false
		for _, n := range names {
			if re.MatchString(n) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no tests: %s -run %q: %q matches no test", tr.Pkg, tr.Run, part)
		}
	}
	return nil
}

// testNames lists the Test and Fuzz functions of the _test.go files in dir.
func testNames(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			if n := fn.Name.Name; strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Fuzz") {
				names = append(names, n)
			}
		}
	}
	return names, nil
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
