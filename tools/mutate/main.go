// Command mutate checks that the tests catch what they claim to. In a
// temporary copy of the tree it applies each deliberate break of
// mutations.go in turn, runs the tests named for it, and prints a table:
// a break is caught when those tests fail. It exits non-zero when any
// break was not caught, or its anchor text is missing, or it does not
// compile. `make mutate` runs it; it is not part of `make test`.
//
// With -check it runs no test: for every mutation it checks that each
// anchor occurs exactly once, that the mutated package still compiles and
// passes the vet checks go test runs (through a go build overlay, so the
// tree is not copied), and that every test pattern names at least one
// test of its package. A refactor that moves the code a mutation breaks,
// or renames the tests that catch it, fails the check at once instead of
// leaving the break unexercised. `make mutate-check` runs it, and `make
// test` runs that.
//
//	go run ./tools/mutate [-only regexp] [-count n] [-keep]
//	go run ./tools/mutate -check [-only regexp] [-j n]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// mutation is one deliberate break: edits applied together, then tests
// that must fail.
type mutation struct {
	Name  string
	Rule  string // the rule it breaks, as the code and tests name it
	Edits []edit
	Tests []testRun
}

// edit replaces Old, which must occur exactly once in File, with New.
type edit struct {
	File, Old, New string
}

// testRun is one `go test -run Run Pkg`.
type testRun struct {
	Pkg, Run string
}

// result is the outcome of one mutation.
type result struct {
	status string // caught, NOT CAUGHT, anchor missing, does not compile
	detail string
	took   time.Duration
}

func (r result) ok() bool { return r.status == "caught" }

func main() {
	only := flag.String("only", "", "run only the mutations whose name matches this regexp")
	count := flag.Int("count", 1, "go test -count for every run (a break counts as caught if any run fails)")
	timeout := flag.Duration("timeout", 5*time.Minute, "time limit of one test run")
	keep := flag.Bool("keep", false, "keep the temporary copy")
	checkOnly := flag.Bool("check", false, "run no test: check anchors, compilation and test names only")
	jobs := flag.Int("j", 4, "mutations checked at once with -check")
	flag.Parse()
	filter, err := regexp.Compile(*only)
	if err != nil {
		fatal(err)
	}
	root, err := gitRoot()
	if err != nil {
		fatal(err)
	}
	if *checkOnly {
		if !checkAll(root, filter, *jobs, *timeout) {
			os.Exit(1)
		}
		return
	}
	tmp, err := os.MkdirTemp("", "kgateway-mutate-")
	if err != nil {
		fatal(err)
	}
	cleanup := func() {
		if !*keep {
			os.RemoveAll(tmp)
		}
	}
	defer cleanup()
	if err := copyTree(root, tmp); err != nil {
		fatal(err)
	}
	fmt.Printf("mutating a copy in %s\n", tmp)
	var failed int
	var rows [][4]string
	for _, m := range mutations {
		if !filter.MatchString(m.Name) {
			continue
		}
		r := run(tmp, m, *count, *timeout)
		if !r.ok() {
			failed++
		}
		fmt.Printf("%-26s %-18s %6s  %s\n", m.Name, r.status, r.took.Round(time.Second), r.detail)
		rows = append(rows, [4]string{m.Name, r.status, m.Rule, r.took.Round(time.Second).String()})
	}
	fmt.Println()
	fmt.Println("| mutation | result | rule | time |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
	if failed > 0 {
		fmt.Printf("\n%d of %d mutations not caught\n", failed, len(rows))
		cleanup() // os.Exit skips deferred calls
		os.Exit(1)
	}
}

// run applies m in dir, runs its tests and restores the files.
func run(dir string, m mutation, count int, timeout time.Duration) result {
	start := time.Now()
	restore, err := apply(dir, m.Edits)
	defer restore()
	if err != nil {
		return result{status: "anchor missing", detail: err.Error(), took: time.Since(start)}
	}
	// Compile first, so that a broken mutation is not reported as caught.
	for _, tr := range m.Tests {
		if out, err := goCmd(dir, timeout, "test", "-count=1", "-run", "^$", tr.Pkg); err != nil {
			return result{status: "does not compile", detail: firstLine(out), took: time.Since(start)}
		}
	}
	var caughtBy []string
	for _, tr := range m.Tests {
		out, err := goCmd(dir, timeout, "test", fmt.Sprintf("-count=%d", count), "-run", tr.Run, tr.Pkg)
		if err != nil {
			caughtBy = append(caughtBy, fmt.Sprintf("%s %s (%s)", tr.Pkg, tr.Run, failedTests(out)))
		} else if bytes.Contains(out, []byte("no tests to run")) {
			return result{status: "no tests ran", detail: fmt.Sprintf("%s -run %s matches nothing", tr.Pkg, tr.Run), took: time.Since(start)}
		}
	}
	if len(caughtBy) == 0 {
		return result{status: "NOT CAUGHT", took: time.Since(start)}
	}
	return result{status: "caught", detail: strings.Join(caughtBy, "; "), took: time.Since(start)}
}

// apply makes the edits and returns a function that undoes them.
func apply(dir string, edits []edit) (restore func(), err error) {
	saved := map[string][]byte{}
	restore = func() {
		for path, b := range saved {
			_ = os.WriteFile(path, b, 0o644)
		}
	}
	for _, e := range edits {
		path := filepath.Join(dir, e.File)
		b, err := os.ReadFile(path)
		if err != nil {
			return restore, err
		}
		if n := bytes.Count(b, []byte(e.Old)); n != 1 {
			return restore, fmt.Errorf("%s: the text to replace occurs %d times, want 1: %q", e.File, n, e.Old)
		}
		if _, ok := saved[path]; !ok {
			saved[path] = b
		}
		if err := os.WriteFile(path, bytes.Replace(b, []byte(e.Old), []byte(e.New), 1), 0o644); err != nil {
			return restore, err
		}
	}
	return restore, nil
}

func goCmd(dir string, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return append(out, []byte("\n--- FAIL: timed out\n")...), ctx.Err()
	}
	return out, err
}

var failRE = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// failedTests lists the failed top-level tests named in go test output.
func failedTests(out []byte) string {
	var names []string
	seen := map[string]bool{}
	for _, m := range failRE.FindAllSubmatch(out, -1) {
		if n := string(m[1]); !seen[n] && !strings.Contains(n, "/") {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return firstLine(out)
	}
	return strings.Join(names, ",")
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func gitRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	return strings.TrimSpace(string(out)), err
}

// copyTree copies every tracked and untracked-but-not-ignored file, so
// that the copy is the working tree as it is, uncommitted edits included.
func copyTree(root, dst string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		path := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, st.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(2)
}
