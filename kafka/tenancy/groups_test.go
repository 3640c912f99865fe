package tenancy

import "testing"

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
