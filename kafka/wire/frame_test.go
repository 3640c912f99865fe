package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

// readBody returns exactly the declared bytes in a buffer of exactly that
// size, charges (grow) exactly that capacity, never more than twice what
// has arrived (plus MinBodyGrow) while the bytes trickle in, and fails on
// a short frame.
func TestReadBody(t *testing.T) {
	noQueue := func() int { return 0 }
	for _, size := range []int{10, MinBodyGrow - 1, MinBodyGrow + 1, 1<<20 + 5, 9<<20 + 3} {
		src := make([]byte, size+7)
		for i := range src {
			src[i] = byte(i * 7)
		}
		// One byte of the frame per 997 read: a trickle.
		r := &countingReader{r: bytes.NewReader(src), chunk: 997}
		charged := 0
		grow := func(have, want int) error {
			if have != charged || want <= have {
				t.Fatalf("size %d: grow(%d, %d) after %d charged", size, have, want, charged)
			}
			// Bytes read so far, minus what br buffered ahead of the body.
			if limit := 2*r.n + MinBodyGrow; want > limit {
				t.Fatalf("size %d: charged %d with %d bytes arrived", size, want, r.n)
			}
			charged = want
			return nil
		}
		got, err := ReadBody(bufio.NewReaderSize(r, 4096), size, grow, noQueue)
		if err != nil || !bytes.Equal(got, src[:size]) || cap(got) != size || charged != size {
			t.Fatalf("size %d: %d bytes (cap %d, charged %d), err %v", size, len(got), cap(got), charged, err)
		}
	}
	// Bytes already waiting are taken in one step.
	src := make([]byte, 3<<20)
	growths := 0
	got, err := ReadBody(bufio.NewReader(bytes.NewReader(src)), len(src),
		func(int, int) error { growths++; return nil }, func() int { return len(src) })
	if err != nil || len(got) != len(src) || growths != 1 {
		t.Fatalf("queued frame: %d bytes in %d growths, err %v", len(got), growths, err)
	}
	for _, size := range []int{100, 1 << 20} {
		_, err := ReadBody(bufio.NewReader(bytes.NewReader(make([]byte, size-1))), size, func(int, int) error { return nil }, noQueue)
		if err != io.ErrUnexpectedEOF {
			t.Fatalf("size %d: short frame: %v", size, err)
		}
	}
	refused := errors.New("refused")
	if _, err := ReadBody(bufio.NewReader(bytes.NewReader(make([]byte, 100))), 100, func(int, int) error { return refused }, noQueue); err != refused {
		t.Fatalf("grow refused: %v", err)
	}
}

// countingReader reads at most chunk bytes at a time and counts them.
type countingReader struct {
	r     io.Reader
	chunk int
	n     int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p[:min(len(p), c.chunk)])
	c.n += n
	return n, err
}
