package ledger

import (
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// Unit tables for the pure planning steps of ReadEntries. The ledger list
// is: 10 (3 entries, sealed), 11 (empty, sealed), 13 (2 entries, sealed),
// 14 (1 entry, open). Ids 12 and below 10 are missing.
var planLedgers = []storage.LedgerInfo{
	{ID: 10, FirstOffset: 0, Entries: 3, Sealed: true},
	{ID: 11, FirstOffset: 3, Entries: 0, Sealed: true},
	{ID: 13, FirstOffset: 3, Entries: 2, Sealed: true},
	{ID: 14, FirstOffset: 5, Entries: 1},
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		rule string
		in   Position
		want Position
		ok   bool
	}{
		{"R2 existing entry", Position{10, 1}, Position{10, 1}, true},
		{"R2 last entry", Position{14, 0}, Position{14, 0}, true},
		{"R3 removed ledger before the first", Position{3, 9}, Position{10, 0}, true},
		{"R3 entry past a closed ledger", Position{10, 3}, Position{13, 0}, true},
		{"R3 entry far past a closed ledger", Position{10, ^EntryID(0)}, Position{13, 0}, true},
		{"R3 R6 empty ledger", Position{11, 0}, Position{13, 0}, true},
		{"R3 id between two ledgers", Position{12, 1}, Position{13, 0}, true},
		{"R5 past the open ledger", Position{14, 1}, Position{}, false},
		{"R5 past every ledger", Position{15, 0}, Position{}, false},
	} {
		got, ok := normalize(planLedgers, tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: normalize(%v) = %v, %v; want %v, %v", tc.rule, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSpans(t *testing.T) {
	type sp struct {
		l        LedgerID
		from, to EntryID
	}
	for _, tc := range []struct {
		rule       string
		from, end  Position
		maxEntries int
		want       []sp
	}{
		{"R6 across ledgers, skipping the empty one", Position{10, 1}, Position{14, 0}, 100, []sp{{10, 1, 2}, {13, 0, 1}, {14, 0, 0}}},
		{"R7 end inside one ledger", Position{10, 0}, Position{10, 1}, 100, []sp{{10, 0, 1}}},
		{"R7 end between ledgers", Position{10, 2}, Position{12, 0}, 100, []sp{{10, 2, 2}}},
		{"R7 end past a sealed ledger's last entry", Position{13, 1}, Position{13, 9}, 100, []sp{{13, 1, 1}}},
		{"R9 maxEntries inside a ledger", Position{10, 0}, Position{14, 0}, 2, []sp{{10, 0, 1}}},
		{"R9 maxEntries across ledgers", Position{10, 2}, Position{14, 0}, 2, []sp{{10, 2, 2}, {13, 0, 0}}},
	} {
		var got []sp
		for _, s := range spansOf(planLedgers, tc.from, tc.end, tc.maxEntries) {
			got = append(got, sp{s.ledger.ID, s.from, s.to})
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: spans %v, want %v", tc.rule, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: spans %v, want %v", tc.rule, got, tc.want)
				break
			}
		}
	}
}

func TestBudget(t *testing.T) {
	hdrs := func(sizes ...int32) []storage.EntryHeader {
		var h []storage.EntryHeader
		for _, s := range sizes {
			h = append(h, storage.EntryHeader{Size: s})
		}
		return h
	}
	for _, tc := range []struct {
		rule      string
		sizes     []int32
		collected int
		already   int64
		maxBytes  int64
		keep      int
		done      bool
	}{
		{"R9 first entry whole though larger", []int32{50, 1}, 0, 0, 10, 1, true},
		{"R9 first entry whole with maxBytes 0", []int32{5}, 0, 0, 0, 1, false},
		{"R9 exactly maxBytes fits", []int32{4, 6, 1}, 0, 0, 10, 2, true},
		{"R9 all fit", []int32{1, 2, 3}, 0, 0, 10, 3, false},
		{"R9 budget carried across ledgers", []int32{3}, 2, 8, 10, 0, true},
	} {
		already := tc.already
		got, done := budget(hdrs(tc.sizes...), tc.collected, &already, tc.maxBytes)
		if len(got) != tc.keep || done != tc.done {
			t.Errorf("%s: kept %d done %v; want %d %v", tc.rule, len(got), done, tc.keep, tc.done)
		}
	}
}
