package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/kgateway/kgateway/bufpool"
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

// A frame within the pool's classes is read into a pooled buffer in its
// last step, which charges the buffer's capacity (at most a quarter more
// than the frame, half more when a kept large buffer is reused) and is
// handed to the caller held once; a smaller one is
// read as ReadBody reads it, and a trickled frame still grows only as
// its bytes arrive.
func TestReadBodyPooled(t *testing.T) {
	for _, size := range []int{1000, bufpool.MinPooled, 1000012, 3<<20 + 1} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i * 13)
		}
		r := &countingReader{r: bytes.NewReader(src), chunk: 65521}
		charged := 0
		grow := func(have, want int) error {
			if have != charged || want <= have || want > 2*r.n+MinBodyGrow+size/2 {
				t.Fatalf("size %d: grow(%d, %d) after %d charged, %d arrived", size, have, want, charged, r.n)
			}
			charged = want
			return nil
		}
		got, frame, err := ReadBodyPooled(bufio.NewReaderSize(r, 4096), size, grow, func() int { return 0 })
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("size %d: %d bytes, err %v", size, len(got), err)
		}
		if size < bufpool.MinPooled {
			if frame != nil || charged != size {
				t.Fatalf("size %d: pooled %v, charged %d", size, frame != nil, charged)
			}
			continue
		}
		if frame == nil || frame.Holders() != 1 || charged < bufpool.Cap(size) || charged > size+size/2 || frame.Cap() != charged || cap(got) != size {
			t.Fatalf("size %d: pooled %v, charged %d, cap %d", size, frame != nil, charged, cap(got))
		}
		frame.Release()
	}
}

// A large frame's growth steps before the last are pooled buffers: each
// step of bufpool.MinPooled bytes or more charges a class size (the
// buffer's whole capacity, no more than the step would have taken), and
// the body still holds every byte in order.
func TestReadBodyStepsPooled(t *testing.T) {
	size := 5<<20 + 11
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i * 31)
	}
	r := &countingReader{r: bytes.NewReader(src), chunk: 40009}
	var steps []int
	grow := func(have, want int) error {
		if want > 2*r.n+MinBodyGrow+size/2 {
			t.Fatalf("grow(%d, %d) with %d arrived", have, want, r.n)
		}
		steps = append(steps, want)
		return nil
	}
	got, frame, err := ReadBodyPooled(bufio.NewReaderSize(r, 4096), size, grow, func() int { return 0 })
	if err != nil || !bytes.Equal(got, src) || frame == nil {
		t.Fatalf("%d bytes, pooled %v, err %v", len(got), frame != nil, err)
	}
	frame.Release()
	pooledSteps := 0
	for _, w := range steps[:len(steps)-1] {
		if w >= bufpool.MinPooled {
			pooledSteps++
			if bufpool.Cap(w) != w {
				t.Fatalf("step of %d bytes is not a pool class (%d)", w, bufpool.Cap(w))
			}
		}
	}
	if pooledSteps == 0 {
		t.Fatalf("no pooled step in %v", steps)
	}
}

// A large frame reuses a kept buffer of another class, up to half more
// than the frame (bufpool "Large buffers are kept, not pooled"), and is
// charged that buffer's whole capacity: what the client holds of the
// budget is the memory its frame holds.
func TestReadBodyReusesKeptBuffer(t *testing.T) {
	size := 10<<20 + 5
	bigger := bufpool.Get(14 << 20) // a class above size's, within half more
	if cap(bigger) <= bufpool.Cap(size) || cap(bigger) > size+size/2 {
		t.Fatalf("test buffer of %d bytes for a %d-byte frame", cap(bigger), size)
	}
	bufpool.DropKept() // what other tests kept: bigger is the one to reuse
	bufpool.Put(bigger)
	src := make([]byte, size)
	for i := range src {
		src[i] = byte(i * 7)
	}
	r := &countingReader{r: bytes.NewReader(src), chunk: 1 << 20}
	charged := 0
	grow := func(have, want int) error {
		charged = want
		return nil
	}
	got, frame, err := ReadBodyPooled(bufio.NewReaderSize(r, 4096), size, grow, func() int { return 0 })
	if err != nil || !bytes.Equal(got, src) || frame == nil {
		t.Fatalf("%d bytes, pooled %v, err %v", len(got), frame != nil, err)
	}
	defer frame.Release()
	if frame.Cap() != cap(bigger) || charged != frame.Cap() || cap(got) != size {
		t.Fatalf("frame in a buffer of %d bytes (kept one %d), charged %d, body cap %d", frame.Cap(), cap(bigger), charged, cap(got))
	}
}
