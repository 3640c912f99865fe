package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Outcomes of one top-level test. notRun is an expected-list entry only:
// the test is left out of the run (go test -skip) because it would not end
// before the timeout; none is a test that ran but reported nothing (the
// test binary died).
const (
	pass   = "pass"
	fail   = "fail"
	skip   = "skip"
	notRun = "not-run"
	none   = "none"
)

// expectation is one line of expected.txt: a test that does not pass
// against kgateway, and why (the missing feature first).
type expectation struct {
	outcome string // fail, skip or not-run
	reason  string
	line    int
}

// parseExpected reads lines "TestName outcome feature: reason"; blank
// lines and # comments are ignored. Every entry needs a reason.
func parseExpected(r io.Reader) (map[string]expectation, error) {
	exp := map[string]expectation{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("line %d: want \"TestName fail|skip|not-run reason\", got %q", n, line)
		}
		switch f[1] {
		case fail, skip, notRun:
		default:
			return nil, fmt.Errorf("line %d: outcome %q is not fail, skip or not-run", n, f[1])
		}
		if strings.Contains(f[0], "/") && f[1] != notRun {
			return nil, fmt.Errorf("line %d: a subtest (%s) can only be not-run", n, f[0])
		}
		if _, dup := exp[f[0]]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, f[0])
		}
		exp[f[0]] = expectation{outcome: f[1], reason: strings.Join(f[2:], " "), line: n}
	}
	return exp, sc.Err()
}

// notRunPattern is go test's -skip pattern for the not-run entries ("" if
// none). They are top-level tests, or subtests of one top-level test
// ("TestA/sub": the rest of TestA runs): go test's pattern, split at its
// slashes level by level, can say one or the other, not both.
func notRunPattern(exp map[string]expectation) (string, error) {
	var tops, subs []string
	parents := map[string]bool{}
	for name, e := range exp {
		if e.outcome != notRun {
			continue
		}
		if parent, sub, ok := strings.Cut(name, "/"); ok {
			subs = append(subs, sub)
			parents[parent] = true
		} else {
			tops = append(tops, name)
		}
	}
	sort.Strings(tops)
	sort.Strings(subs)
	switch {
	case len(subs) == 0 && len(tops) == 0:
		return "", nil
	case len(subs) == 0:
		return "^(" + strings.Join(tops, "|") + ")$", nil
	case len(tops) == 0 && len(parents) == 1:
		for parent := range parents {
			return "^" + parent + "$/^(" + strings.Join(subs, "|") + ")$", nil
		}
	}
	return "", fmt.Errorf("not-run entries must be top-level tests or subtests of one test, not both")
}

// verdict is the comparison of one run with the expected list.
type verdict struct {
	counts   map[string]int // outcome -> tests, as expected
	expected []string       // lines for the listed tests that did as listed
	problems []string       // anything else; the run fails if non-empty
}

// compare judges every test of the package (all, from go test -list)
// against exp. partial (a -run filter) ignores tests that did not run.
// The list only shrinks: a listed test that now passes is a problem too,
// so that its entry goes and a later regression is caught.
func compare(all []string, got map[string]string, exp map[string]expectation, partial bool) verdict {
	v := verdict{counts: map[string]int{}}
	known := map[string]bool{}
	for _, name := range all {
		known[name] = true
		o, ran := got[name]
		if !ran {
			o = none
		}
		e, listed := exp[name]
		switch {
		case listed && e.outcome == notRun && o == none:
			v.counts[notRun]++
			v.expected = append(v.expected, fmt.Sprintf("%-44s not run  %s", name, e.reason))
		case o == none && partial:
		case o == none:
			v.problems = append(v.problems, fmt.Sprintf("%s: no outcome (did the test binary die? see its output above)", name))
		case !listed && o == pass:
			v.counts[pass]++
		case !listed:
			v.problems = append(v.problems, fmt.Sprintf("%s: unexpected %s", name, o))
		case o == e.outcome:
			v.counts[o]++
			v.expected = append(v.expected, fmt.Sprintf("%-44s %-8s %s", name, o, e.reason))
		case o == pass:
			v.problems = append(v.problems, fmt.Sprintf("%s: listed as %s (expected.txt:%d) but passes now: remove its line", name, e.outcome, e.line))
		default:
			v.problems = append(v.problems, fmt.Sprintf("%s: %s, but expected.txt:%d lists it as %s", name, o, e.line, e.outcome))
		}
	}
	for name, e := range exp {
		if parent, _, sub := strings.Cut(name, "/"); sub && known[parent] {
			v.counts[notRun]++
			v.expected = append(v.expected, fmt.Sprintf("%-44s not run  %s", name, e.reason))
		}
	}
	if len(got) == 0 {
		v.problems = append(v.problems, "no test reported an outcome")
	}
	if !partial {
		for name, e := range exp {
			if parent, _, _ := strings.Cut(name, "/"); !known[parent] {
				v.problems = append(v.problems, fmt.Sprintf("%s: expected.txt:%d names a test the suite no longer has: remove its line", name, e.line))
			}
		}
	}
	sort.Strings(v.problems)
	return v
}
