package sendfile

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// Write sends memory pieces and file ranges in order: the peer receives
// exactly the concatenation of the pieces' Bytes, whether the file pieces
// go with sendfile or from memory. The file holds the ranges' bytes at
// other offsets than they have in the response, and bytes around them
// that must not be sent.
func TestWriteSendsPiecesInOrder(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fileBytes := make([]byte, 3*MinFileBytes+1000)
	for i := range fileBytes {
		fileBytes[i] = byte(i*31 + 7)
	}
	if _, err := f.Write(fileBytes); err != nil {
		t.Fatal(err)
	}
	big := fileBytes[100 : 100+2*MinFileBytes]              // sent with sendfile
	small := fileBytes[2*MinFileBytes+500 : 3*MinFileBytes] // below MinFileBytes: from memory
	pieces := []Piece{
		{Bytes: []byte("head")},
		{Bytes: big, File: f, Off: 100},
		{Bytes: []byte{1, 2, 3}},
		{Bytes: small, File: f, Off: 2*MinFileBytes + 500},
		{Bytes: big, File: f, Off: 100},
		{Bytes: []byte("tail")},
	}
	var want []byte
	for _, p := range pieces {
		want = append(want, p.Bytes...)
	}
	for _, files := range []bool{true, false} {
		got := roundTrip(t, pieces, files)
		if !bytes.Equal(got, want) {
			t.Fatalf("files %v: received %d bytes, want %d (equal prefix %d)", files, len(got), len(want), commonPrefix(got, want))
		}
	}
	if !Supported(&net.TCPConn{}) && haveSendfile {
		t.Fatal("a TCP connection is not Supported")
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Supported(a) {
		t.Fatal("a pipe is Supported")
	}
}

// A range the file does not hold fails the write rather than sending
// other bytes.
func TestWriteShortFileFails(t *testing.T) {
	if !haveSendfile {
		t.Skip("no sendfile here")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "seg"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, MinFileBytes)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := Write(c, []Piece{{Bytes: make([]byte, 2*MinFileBytes), File: f, Off: 0}}, true)
	if err == nil {
		t.Fatalf("a range past the file's end was written (%d bytes)", n)
	}
}

func roundTrip(t *testing.T, pieces []Piece, files bool) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := Write(c, pieces, files)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := <-got
	if int(n) != len(b) {
		t.Fatalf("Write reported %d bytes, peer got %d", n, len(b))
	}
	return b
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
