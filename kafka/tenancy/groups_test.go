package tenancy

import (
	"maps"
	"testing"

	"github.com/kgateway/kgateway/offsets"
)

// A principal creates at most max groups that exist; existing groups are
// always admitted; a group gone (deleted, expired, or never created
// because its request failed) gives its place back; "" is unbounded.
func TestGroupsPerPrincipal(t *testing.T) {
	live := map[string]bool{}
	exists := func(id string) bool { return live[id] }
	g := NewGroups(2)
	for _, id := range []string{"a", "b"} {
		if !g.Admit("User:m", id, exists) {
			t.Fatalf("group %s refused", id)
		}
		live[id] = true
	}
	if g.Admit("User:m", "c", exists) {
		t.Fatal("a third group admitted")
	}
	if !g.Admit("User:m", "a", exists) || !g.Admit("User:o", "c", exists) {
		t.Fatal("an existing group, or another principal's first, refused")
	}
	delete(live, "a")
	if !g.Admit("User:m", "c", exists) {
		t.Fatal("a deleted group's place not given back")
	}
	for i := range 10 {
		if !g.Admit("", string(rune('d'+i)), exists) {
			t.Fatal("the principal of no tenant bounded")
		}
	}
}

// With a store attached, claims survive a restart (a new Groups loading
// the same store): the principal at its bound stays at it, another
// principal is unaffected, and a forgotten claim's record goes.
func TestGroupsOwnersDurable(t *testing.T) {
	st, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	live := map[string]bool{}
	exists := func(id string) bool { return live[id] }
	g := NewGroups(2)
	if err := g.Load(st); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if !g.Admit("User:m", id, exists) {
			t.Fatalf("group %s refused", id)
		}
		live[id] = true
	}
	restarted := NewGroups(2)
	if err := restarted.Load(st); err != nil {
		t.Fatal(err)
	}
	if restarted.Admit("User:m", "c", exists) {
		t.Fatal("after a restart, a third group admitted")
	}
	if !restarted.Admit("User:o", "c", exists) {
		t.Fatal("another principal's first group refused")
	}
	delete(live, "a")
	if !restarted.Admit("User:m", "d", exists) {
		t.Fatal("a deleted group's place not given back")
	}
	owners, err := st.Owners(offsets.OwnerGroup)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"b": "User:m", "c": "User:o", "d": "User:m"}
	if !maps.Equal(owners, want) {
		t.Fatalf("owner records %v, want %v", owners, want)
	}
}
