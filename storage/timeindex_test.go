package storage

import (
	"errors"
	"slices"
	"testing"
)

// timeModel is what SeekTime must answer for a log: the entries' offsets
// and max timestamps in order, and the log start.
type timeModel struct {
	offs  []Offset
	times []int64
	start Offset
}

func (m *timeModel) add(h EntryHeader) {
	m.offs = append(m.offs, h.Offset)
	m.times = append(m.times, h.MaxTime)
}

// want is the first entry whose running max is >= ts, or when that is
// below the start the entry holding the start; ok is false when there is
// none.
func (m *timeModel) want(ts int64) (Offset, bool) {
	for i, t := range m.times {
		if t < ts {
			continue
		}
		for m.offs[i] < m.start && i+1 < len(m.offs) && m.offs[i+1] <= m.start {
			i++
		}
		return m.offs[i], true
	}
	return 0, false
}

// check compares SeekTime with the model for every timestamp up to hi.
func (m *timeModel) check(t *testing.T, s *Store, id LogID, hi int64) {
	t.Helper()
	m.checkAs(t, "", s, id, hi)
}

// checkAs is check with a prefix for its failures.
func (m *timeModel) checkAs(t *testing.T, prefix string, s *Store, id LogID, hi int64) {
	t.Helper()
	for ts := int64(-1); ts <= hi; ts++ {
		off, ok := m.want(ts)
		h, err := s.SeekTime(id, ts)
		switch {
		case !ok && !errors.Is(err, ErrNotFound):
			t.Fatalf("%sSeekTime(%d) = %+v %v, want ErrNotFound", prefix, ts, h, err)
		case ok && (err != nil || h.Offset != off):
			t.Fatalf("%sSeekTime(%d) = %+v %v, want offset %d", prefix, ts, h, err, off)
		}
	}
}

// crashTimeModel is the time model of a log recovered from a crash: the
// entries written below its End (a dense log loses only a suffix), the
// trimmed ones included, as they raised the running max too.
func crashTimeModel(times map[Offset]int64, info LogInfo) (m timeModel, hi int64) {
	offs := make([]Offset, 0, len(times))
	for off := range times {
		if off < info.End {
			offs = append(offs, off)
		}
	}
	slices.Sort(offs)
	for _, off := range offs {
		m.offs = append(m.offs, off)
		m.times = append(m.times, times[off])
		hi = max(hi, times[off]+1)
	}
	m.start = info.Start
	if info.Start >= info.End {
		m.offs, m.times = nil, nil
	}
	return m, hi
}

// The time index is sparse (timeKeyEvery) and SeekTime is still exact:
// it finds an entry that raised the running max without a key of its own,
// whether the next key is above ts or there is none.
func TestSeekTimeSparse(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	var m timeModel
	for i := 0; i < 300; i++ {
		ts := int64(10 * i) // rises at every entry, but dips every 7th
		if i%7 == 3 {
			ts = 5
		}
		m.add(mustAppend(t, s, 1, 1+i%3, []byte{byte(i)}, ts))
	}
	if n := keysOf(t, s.db, prefixTime, 1); n >= 300/4 {
		t.Fatalf("%d time keys for 300 raising entries", n)
	}
	m.check(t, s, 1, 3000)
}

// Open recovers the running max from the newest time key and the entries
// past it that raised it without a key: a later entry below that max
// raises nothing, and SeekTime still finds the unkeyed raise.
func TestSeekTimeAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	var m timeModel
	m.add(mustAppend(t, s, 1, 1, []byte("a"), 100)) // keyed
	m.add(mustAppend(t, s, 1, 1, []byte("b"), 200)) // raises, no key
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	m.add(mustAppend(t, s, 1, 1, []byte("c"), 150)) // below the max: no raise
	m.add(mustAppend(t, s, 1, 1, []byte("d"), 180))
	m.check(t, s, 1, 250)
}

// HardTrim keeps the running max at the trim point in the time index
// when the highest raise below it had no key: an entry past the trim
// with a timestamp below that max is not the answer.
func TestHardTrimUnkeyedRaise(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	var m timeModel
	for i, ts := range []int64{0, 500, 200, 300} { // 500: raises, no key
		m.add(mustAppend(t, s, 1, 10, []byte{byte(i)}, ts))
		if _, err := s.Roll(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.HardTrim(1, 20); err != nil { // removes [0,10) and [10,20)
		t.Fatal(err)
	}
	m.start = 20
	m.check(t, s, 1, 600)
}
