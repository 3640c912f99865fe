// Package objstoretest holds checks of an object store that the tests of
// several packages run: against the file backend and a real S3 server.
package objstoretest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// RoundTrip puts, gets, range-reads, lists and deletes objects in b, and
// leaves none of them behind. b must hold nothing under ledgers/.
func RoundTrip(t testing.TB, b *blob.Bucket) {
	t.Helper()
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	for _, k := range []string{"ledgers/t-0/1", "ledgers/t-0/2", "ledgers/t-1/1"} {
		if err := b.WriteAll(ctx, k, data, nil); err != nil {
			t.Fatalf("write %s: %v", k, err)
		}
	}
	got, err := b.ReadAll(ctx, "ledgers/t-0/1")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	attrs, err := b.Attributes(ctx, "ledgers/t-0/1")
	if err != nil || attrs.Size != int64(len(data)) {
		t.Fatalf("attributes: %+v, %v", attrs, err)
	}
	const off, n = 1<<20 - 100, 64 // a range that ends 36 bytes before the end
	r, err := b.NewRangeReader(ctx, "ledgers/t-0/1", off, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(part, data[off:off+n]) {
		t.Fatalf("range read: %q, %v", part, err)
	}
	bigRoundTrip(t, b, "ledgers/t-0/2")
	if keys := List(t, b, "ledgers/t-0/"); strings.Join(keys, ",") != "ledgers/t-0/1,ledgers/t-0/2" {
		t.Fatalf("list ledgers/t-0/: %v", keys)
	}
	for _, k := range []string{"ledgers/t-0/1", "ledgers/t-0/2", "ledgers/t-1/1"} {
		if err := b.Delete(ctx, k); err != nil {
			t.Fatalf("delete %s: %v", k, err)
		}
	}
	if _, err := b.ReadAll(ctx, "ledgers/t-0/1"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("read after delete: %v, want NotFound", err)
	}
	if keys := List(t, b, "ledgers/"); len(keys) != 0 {
		t.Fatalf("list after delete: %v", keys)
	}
}

// bigRoundTrip overwrites key with an object of BigSize bytes, written in
// small pieces, which S3 stores as a multipart upload of BigParts parts,
// and reads a range across a part boundary.
func bigRoundTrip(t testing.TB, b *blob.Bucket, key string) {
	t.Helper()
	ctx := context.Background()
	big := Big()
	w, err := b.NewWriter(ctx, key, &blob.WriterOptions{BufferSize: BigPartSize})
	if err != nil {
		t.Fatal(err)
	}
	for p := big; len(p) > 0; p = p[min(len(p), 100_000):] {
		if _, err := w.Write(p[:min(len(p), 100_000)]); err != nil {
			t.Fatalf("write %s: %v", key, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", key, err)
	}
	const off, n = BigPartSize - 1000, 3000
	r, err := b.NewRangeReader(ctx, key, off, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(part, big[off:off+n]) {
		t.Fatalf("range read of %s across a part boundary: %d bytes, %v", key, len(part), err)
	}
	got, err := b.ReadAll(ctx, key)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back %s: %d bytes, %v", key, len(got), err)
	}
}

// The big object: larger than the 16 MiB from which the AWS SDK's transfer
// manager (under gocloud's s3blob) uploads in parts, in parts of
// BigPartSize (S3's minimum part is 5 MiB).
const (
	BigSize     = 17 << 20
	BigPartSize = 5 << 20
	BigParts    = 4
)

// Big returns BigSize bytes of a pattern that differs at every part
// boundary.
func Big() []byte {
	big := make([]byte, BigSize)
	for i := range big {
		big[i] = byte(i * 7 / 3)
	}
	return big
}

// List returns the keys under prefix, in order.
func List(t testing.TB, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		keys = append(keys, obj.Key)
	}
}
