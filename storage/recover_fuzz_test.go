package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// FuzzCorruptSegmentReopen corrupts a ledger file and reopens the store:
// Open must not fail on (or panic at) any bytes, and every entry it then
// serves must be exactly one that was written, at its offset (I5: a
// partial or altered entry fails its length or CRC check and is never
// served). Mode bit 0 clear appends the fuzz bytes as a garbage tail, as a
// torn write would leave; set, it overwrites the file at pos with them.
// Mode bit 1 also drops the index's unsynced writes (a crash), so Open
// re-scans the file from its first unindexed frame (I4).
func FuzzCorruptSegmentReopen(f *testing.F) {
	f.Add(uint8(0), uint16(0), []byte{0, 0, 0, 40, 1, 2, 3})
	f.Add(uint8(1), uint16(3), []byte{0xff, 0xff})
	f.Add(uint8(1), uint16(30), []byte("garbage in a payload"))
	f.Add(uint8(1), uint16(0), make([]byte, 64))
	f.Add(uint8(2), uint16(0), []byte{0, 0, 0, 40, 1, 2, 3})
	f.Add(uint8(3), uint16(50), []byte{1})
	f.Add(uint8(4), uint16(40), []byte{})
	f.Add(uint8(6), uint16(40), []byte{})
	f.Fuzz(func(t *testing.T, mode uint8, pos uint16, junk []byte) {
		fs := vfstest.NewMemFS()
		const dir = "/data"
		pfs := vfs.NewCrashableMem()
		st, err := Open(dir, Options{FS: fs, PebbleFS: pfs})
		if err != nil {
			t.Fatal(err)
		}
		written := map[Offset][]byte{}
		if err := st.CreateLog(1); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			payload := bytes.Repeat([]byte{byte('a' + i)}, 10+7*i)
			h, err := st.Append(1, 1+i, payload, AppendOptions{MaxTime: int64(i)})
			if err != nil {
				t.Fatal(err)
			}
			written[h.Offset] = payload
		}
		info, err := st.Info(1)
		if err != nil {
			t.Fatal(err)
		}
		led := info.Ledgers[len(info.Ledgers)-1].ID
		var reopenFS vfs.FS = pfs
		if mode&2 != 0 {
			reopenFS = pfs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		}
		st.Close()

		name := filepath.Join(dir, "segments", SegmentFileName(1, led))
		file, err := fs.OpenFile(name, os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := file.Size()
		at := size
		if mode%2 == 1 || mode&4 != 0 {
			at = int64(pos) % max(size, 1)
		}
		refuse := refuseNever
		if mode&4 != 0 {
			if err := file.Truncate(at); err != nil {
				t.Fatal(err)
			}
			refuse = refuseMust
			if mode&2 != 0 {
				refuse = refuseMay
			}
		} else if _, err := file.WriteAt(junk, at); err != nil {
			t.Fatal(err)
		}
		file.Sync()
		file.Close()

		// A garbage tail harms no entry; an overwrite or a cut may (fail
		// closed).
		checkServedExactly(t, fs, reopenFS, dir, written, mode&5 == 0, refuse)
	})
}

// refusal says whether reopening a corrupted store must fail.
type refusal int

const (
	refuseNever refusal = iota // Open must succeed
	refuseMay                  // either; a failure must be ErrCorrupt
	refuseMust                 // Open must fail with ErrCorrupt
)

// checkServedExactly reopens dir and reads everything; with wantAll, every
// written entry must be served.
func checkServedExactly(t *testing.T, fs *vfstest.MemFS, pfs vfs.FS, dir string, written map[Offset][]byte, wantAll bool, refuse refusal) {
	t.Helper()
	st, err := Open(dir, Options{FS: fs, PebbleFS: pfs})
	switch {
	case err != nil && refuse == refuseNever:
		t.Fatalf("reopen refused where Open reads nothing it could find corrupt: %v", err)
	case err != nil && !errors.Is(err, ErrCorrupt):
		t.Fatalf("reopen of a file shorter than its index: %v, want ErrCorrupt", err)
	case err != nil:
		return // the index names bytes that are gone: refusing is right
	case refuse == refuseMust:
		st.Close()
		t.Fatal("reopened a ledger file shorter than its index says")
	}
	defer st.Close()
	for _, id := range st.Logs() {
		info, err := st.Info(id)
		if err != nil {
			t.Fatal(err)
		}
		served := 0
		for off := info.Start; off < info.End; {
			es, err := st.ReadEntries(id, off, 1<<20, 1<<20)
			if !wantAll && (errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound)) {
				return
			}
			if err != nil || len(es) == 0 {
				t.Fatalf("read @%d of [%d,%d): %d entries, %v", off, info.Start, info.End, len(es), err)
			}
			for _, e := range es {
				if want, ok := written[e.Offset]; !ok || !bytes.Equal(want, e.Payload) {
					t.Fatalf("served entry @%d (%d bytes) was never written: %s", e.Offset, len(e.Payload), fmt.Sprintf("%q", e.Payload))
				}
				off = e.End()
				served++
			}
		}
		if wantAll && served < len(written) {
			t.Fatalf("%d of %d written entries served after a garbage tail", served, len(written))
		}
	}
}
