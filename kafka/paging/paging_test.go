package paging

import (
	"fmt"
	"math"
	"testing"
)

func counts(m map[string]int32) func(string) (int32, bool) {
	return func(n string) (int32, bool) { c, ok := m[n]; return c, ok }
}

func show(p Page) string {
	s := fmt.Sprint(p.Entries)
	if p.Next != nil {
		s += fmt.Sprintf(" next %s/%d", p.Next.Topic, p.Next.Partition)
	}
	return s
}

func TestCut(t *testing.T) {
	parts := counts(map[string]int32{"a": 3, "b": 2, "c": 0})
	for _, tc := range []struct {
		names []string
		from  *Mark
		limit int32
		all   bool
		want  string
	}{
		{[]string{"b", "a"}, nil, 10, false, "[{a 0 3 false} {b 0 2 false}]"},
		{[]string{"a", "b"}, nil, 3, false, "[{a 0 3 false}] next b/0"},
		{[]string{"a", "b"}, &Mark{"a", 1}, 3, false, "[{a 1 3 false} {b 0 1 false}] next b/1"},
		{[]string{"a", "x"}, nil, 10, false, "[{a 0 3 false} {x 0 0 true}]"},
		{[]string{"a", "x"}, nil, 10, true, "[{a 0 3 false}]"},
		{[]string{"c", "a"}, nil, 3, false, "[{a 0 3 false}] next c/0"},
		{[]string{"a"}, &Mark{"a", math.MaxInt32}, 5, false, "[{a 2147483647 2147483647 false}]"},
		{[]string{"a", "b"}, &Mark{"b", 0}, 10, false, "[{b 0 2 false}]"},
	} {
		if got := show(Cut(tc.names, parts, tc.from, tc.limit, tc.all)); got != tc.want {
			t.Errorf("%v from %v limit %d all %v: %s, want %s", tc.names, tc.from, tc.limit, tc.all, got, tc.want)
		}
	}
	if Limit(0, 2000) != 1 || Limit(5000, 2000) != 2000 || Limit(-3, 2000) != 1 {
		t.Error("Limit: not at least 1 and at most the broker's")
	}
}
