package fsys

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// WriteAtv writes its buffers back to back at the offset, as one WriteAt
// of their concatenation, skipping empty ones and leaving the bytes
// before the offset alone.
func TestWriteAtv(t *testing.T) {
	f, err := OS().OpenFile(filepath.Join(t.TempDir(), "f"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("0123456789"), 0); err != nil {
		t.Fatal(err)
	}
	head, body := []byte("HEAD"), bytes.Repeat([]byte("b"), 300<<10)
	n, err := f.(VectorWriter).WriteAtv([][]byte{head, nil, body}, 6)
	if err != nil || n != len(head)+len(body) {
		t.Fatalf("WriteAtv: %d, %v", n, err)
	}
	got := make([]byte, 6+n+1)
	m, _ := f.ReadAt(got, 0)
	want := append(append([]byte("012345"), head...), body...)
	if !bytes.Equal(got[:m], want) {
		t.Fatalf("file holds %d bytes, want %d (%q...)", m, len(want), got[:12])
	}
}

// advance, after a short write, drops exactly the bytes written, within
// a buffer or across several, and leaves the caller's buffers whole.
func TestAdvance(t *testing.T) {
	bufs := [][]byte{[]byte("abc"), nil, []byte("defg"), []byte("hi")}
	for n, want := range []string{"abcdefghi", "bcdefghi", "cdefghi", "defghi", "efghi", "fghi", "ghi", "hi", "i", ""} {
		rest := advance(bufs, n)
		if len(rest) > 0 && len(rest[0]) == 0 {
			t.Fatalf("advance by %d left an empty buffer first", n)
		}
		if got := string(bytes.Join(rest, nil)); got != want {
			t.Fatalf("advance by %d left %q, want %q", n, got, want)
		}
		if string(bufs[0]) != "abc" || string(bufs[2]) != "defg" {
			t.Fatalf("advance by %d changed the caller's buffers", n)
		}
	}
}
