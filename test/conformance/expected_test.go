package main

import (
	"os"
	"strings"
	"testing"
)

// Every kind of divergence from the list is a problem; doing as listed is
// not.
func TestCompare(t *testing.T) {
	exp, err := parseExpected(strings.NewReader(`
# comment
TestListedFail   fail    transactions: not supported
TestListedSkip   skip    SASL: none
TestHangs        not-run transactions: loops until the timeout
TestFixed        fail    KIP-848: not supported
TestSkipToFail   skip    share groups: none
TestGone         fail    renamed upstream
`))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := notRunPattern(exp); err != nil || p != "^(TestHangs)$" {
		t.Fatalf("skip pattern %q", p)
	}
	all := []string{"TestOK", "TestListedFail", "TestListedSkip", "TestHangs", "TestFixed", "TestSkipToFail", "TestNew", "TestNewSkip", "TestDied"}
	got := map[string]string{"TestOK": pass, "TestListedFail": fail, "TestListedSkip": skip, "TestFixed": pass,
		"TestSkipToFail": fail, "TestNew": fail, "TestNewSkip": skip}
	v := compare(all, got, exp, false)
	want := []string{
		"TestDied: no outcome",
		"TestFixed: listed as fail (expected.txt:6) but passes now",
		"TestGone: expected.txt:8 names a test the suite no longer has",
		"TestNew: unexpected fail",
		"TestNewSkip: unexpected skip",
		"TestSkipToFail: fail, but expected.txt:7 lists it as skip",
	}
	if len(v.problems) != len(want) {
		t.Fatalf("problems:\n%s", strings.Join(v.problems, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(v.problems[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, v.problems[i], w)
		}
	}
	if v.counts[pass] != 1 || v.counts[fail] != 1 || v.counts[skip] != 1 || v.counts[notRun] != 1 {
		t.Fatalf("counts %v", v.counts)
	}
	// A -run filter judges only what ran.
	if v := compare(all, map[string]string{"TestOK": pass}, exp, true); len(v.problems) != 0 {
		t.Fatalf("partial: %v", v.problems)
	}
	if v := compare(all, nil, exp, true); len(v.problems) != 1 {
		t.Fatalf("nothing ran: %v", v.problems)
	}
}

// The checked-in lists parse, and every entry names what is missing.
func TestExpectedFileParses(t *testing.T) {
	for _, file := range []string{"expected.txt", "expected-kafka-go.txt"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := parseExpected(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if _, err := notRunPattern(exp); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for name, e := range exp {
			if !strings.Contains(e.reason, ":") {
				t.Errorf("%s: %s: reason %q does not start with the missing feature", file, name, e.reason)
			}
		}
	}
}

func TestParseExpectedErrors(t *testing.T) {
	for _, in := range []string{"TestA fail", "TestA maybe why: so", "TestA fail x: y\nTestA skip x: y"} {
		if _, err := parseExpected(strings.NewReader(in)); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// Subtests can be left out of the run, all of one test: the rest of it
// runs and is judged.
func TestNotRunSubtests(t *testing.T) {
	exp, err := parseExpected(strings.NewReader("TestA/x not-run bug: panics\nTestA/y not-run bug: panics\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := notRunPattern(exp); err != nil || p != "^TestA$/^(x|y)$" {
		t.Fatalf("pattern %q %v", p, err)
	}
	v := compare([]string{"TestA", "TestB"}, map[string]string{"TestA": pass, "TestB": pass}, exp, false)
	if len(v.problems) != 0 || v.counts[notRun] != 2 || v.counts[pass] != 2 {
		t.Fatalf("%v %v", v.problems, v.counts)
	}
	if v := compare([]string{"TestB"}, map[string]string{"TestB": pass}, exp, false); len(v.problems) != 2 {
		t.Fatalf("a gone parent: %v", v.problems)
	}
	exp["TestC"] = expectation{outcome: notRun}
	if _, err := notRunPattern(exp); err == nil {
		t.Fatal("a top-level and a subtest not-run mixed")
	}
	if _, err := parseExpected(strings.NewReader("TestA/x fail bug: fails\n")); err == nil {
		t.Fatal("a failing subtest entry parsed")
	}
}
