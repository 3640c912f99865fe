package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/storage/objstore/objstoretest"
	"github.com/kgateway/kgateway/test/s3server"
)

// TestS3RoundTrip opens a real S3 server (versitygw, test/s3server) through
// objstore.Open with an s3:// object.store.url and puts, gets, range-reads
// (across a multipart part boundary), lists and deletes objects.
func TestS3RoundTrip(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := objstore.Check(ctx, b); err != nil {
		t.Fatalf("Check: %v", err)
	}
	objstoretest.RoundTrip(t, b)
	if keys := objstoretest.List(t, b, ""); len(keys) != 0 {
		t.Fatalf("objects left behind: %v", keys)
	}
}

// TestS3CheckFailsWithoutBucket: Check against a bucket the server does not
// have, and with wrong credentials, fails.
func TestS3CheckFailsWithoutBucket(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	b, err := objstore.Open(ctx, "s3://no-such-bucket?endpoint="+srv.Endpoint+"&region="+s3server.Region+"&use_path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := objstore.Check(ctx, b); err == nil {
		t.Fatal("Check passed against a bucket that does not exist")
	}
}

// TestS3Multipart: an object over the SDK's multipart threshold is stored as
// a multipart upload (its ETag ends in -<parts>) and reads back whole and by
// a range across a part boundary, and the SDK prints nothing to stderr
// (it would warn "Skipped validation of multipart checksum" on the whole
// read unless objstore.Open makes response validation when_required).
func TestS3Multipart(t *testing.T) {
	srv := s3server.Start(t)
	ctx := context.Background()
	// The SDK's logger takes os.Stderr when the client is made, in Open.
	stderr := redirectStderr(t)
	b, err := objstore.Open(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	big := objstoretest.Big()
	w, err := b.NewWriter(ctx, "big", &blob.WriterOptions{BufferSize: objstoretest.BigPartSize})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(big); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	attrs, err := b.Attributes(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("-%d\"", objstoretest.BigParts); !strings.HasSuffix(attrs.ETag, want) || attrs.Size != int64(len(big)) {
		t.Fatalf("attributes: ETag %s size %d, want a multipart ETag ending %s and size %d", attrs.ETag, attrs.Size, want, len(big))
	}
	off := int64(2*objstoretest.BigPartSize - 10)
	r, err := b.NewRangeReader(ctx, "big", off, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	part, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(part, big[off:off+20]) {
		t.Fatalf("range across parts 2 and 3: %x, %v", part, err)
	}
	got, err := b.ReadAll(ctx, "big")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	if out := stderr(); out != "" {
		t.Fatalf("the S3 client wrote to stderr:\n%s", out)
	}
}

// redirectStderr points os.Stderr at a file until the test ends; the
// function returned reads what was written so far.
func redirectStderr(t *testing.T) func() string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	t.Cleanup(func() { os.Stderr = saved; f.Close() })
	return func() string {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}
