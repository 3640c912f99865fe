package features

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var specs = []Spec{{Name: "a.version", Min: 0, Max: 2, Default: 2}, {Name: "b.version", Min: 1, Max: 1, Default: 1}}

// Applied levels survive a reopen, with the epoch counting changes; a
// no-op update does not bump it; a level of 0 is not finalized.
func TestApplyPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "features.json")
	l, err := Open(path, specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Apply(1, []Update{{"a.version", 2, Upgrade}}, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, epoch := l.Finalized(); epoch != 1 {
		t.Fatalf("a no-op bumped the epoch to %d", epoch)
	}
	if err := l.Apply(1, []Update{{"a.version", 0, UnsafeDowngrade}}, false, nil); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, specs)
	if err != nil {
		t.Fatal(err)
	}
	fin, epoch := r.Finalized()
	if r.Level("a.version") != 0 || epoch != 2 || len(fin) != 1 || fin[0].Name != "b.version" {
		t.Errorf("reopened: a=%d epoch %d finalized %v", r.Level("a.version"), epoch, fin)
	}
}

// A request naming a feature twice is decided by its last update; the
// first refused update refuses all; validate_only changes nothing; a
// hidden feature is unsupported.
func TestApplyRules(t *testing.T) {
	l, _ := Open("", specs)
	err := l.Apply(7, []Update{{"a.version", 5, Upgrade}, {"a.version", 1, SafeDowngrade}}, false, nil)
	if err != nil || l.Level("a.version") != 1 {
		t.Fatalf("last update wins: %v, level %d", err, l.Level("a.version"))
	}
	err = l.Apply(7, []Update{{"a.version", 0, SafeDowngrade}, {"b.version", 0, SafeDowngrade}}, false, nil)
	var fe *Error
	if !errors.As(err, &fe) || fe.Update.Name != "b.version" || !strings.Contains(err.Error(), "Local controller 7 only supports versions 1-1") {
		t.Fatalf("refusal: %v", err)
	}
	if l.Level("a.version") != 1 {
		t.Fatal("a refused request changed a level")
	}
	if err := l.Apply(7, []Update{{"a.version", 2, Upgrade}}, true, nil); err != nil || l.Level("a.version") != 1 {
		t.Fatalf("validate only: %v, level %d", err, l.Level("a.version"))
	}
	err = l.Apply(7, []Update{{"a.version", 2, Upgrade}}, false, func(n string) bool { return n == "a.version" })
	if err == nil || !strings.Contains(err.Error(), "does not support this feature") {
		t.Fatalf("hidden: %v", err)
	}
}

// A levels file naming a level outside its feature's range is refused.
func TestOpenRefusesOutOfRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "features.json")
	if err := os.WriteFile(path, []byte(`{"epoch":3,"levels":{"a.version":9}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, specs); err == nil {
		t.Fatal("opened a file with a.version 9")
	}
}

// Capped lowers one feature's range and default, only when on, and
// leaves the specs given unchanged.
func TestCapped(t *testing.T) {
	specs := []Spec{{Name: "a", Max: 2, Default: 2}, {Name: "b", Max: 2, Default: 2}}
	got := Capped(specs, "a", 1, true)
	if got[0].Max != 1 || got[0].Default != 1 || got[1].Max != 2 || specs[0].Max != 2 {
		t.Errorf("capped %+v (from %+v)", got, specs)
	}
	if off := Capped(specs, "a", 1, false); off[0].Max != 2 || off[0].Default != 2 {
		t.Errorf("capped while off: %+v", off)
	}
}
