package tier

import (
	"context"
	"errors"
	"io"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Bucket is the little of an object store the tier uses. BlobBucket adapts
// a gocloud *blob.Bucket (any backend: file, S3-compatible, GCS, Azure);
// tests wrap one to inject faults (tiertest.Faulty).
type Bucket interface {
	// ReadRange returns length bytes of key from offset (length < 0: to
	// the end).
	ReadRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// Size is the object's size in bytes.
	Size(ctx context.Context, key string) (int64, error)
	// Write returns a writer of key: the object exists, whole, once Close
	// returns nil; cancelling ctx before Close aborts it (nothing is
	// written).
	Write(ctx context.Context, key string) (io.WriteCloser, error)
	// Delete removes key; a missing key is ErrNotExist.
	Delete(ctx context.Context, key string) error
	// List calls fn for every object under prefix.
	List(ctx context.Context, prefix string, fn func(key string, size int64, mod time.Time) error) error
}

// ErrNotExist: no such object.
var ErrNotExist = errors.New("tier: no such object")

// BlobBucket is a Bucket over gocloud's portable blob API.
func BlobBucket(b *blob.Bucket) Bucket { return blobBucket{b} }

type blobBucket struct{ b *blob.Bucket }

func notExist(err error) error {
	if err != nil && gcerrors.Code(err) == gcerrors.NotFound {
		return errors.Join(ErrNotExist, err)
	}
	return err
}

func (b blobBucket) ReadRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	r, err := b.b.NewRangeReader(ctx, key, off, n, nil)
	return r, notExist(err)
}

func (b blobBucket) Size(ctx context.Context, key string) (int64, error) {
	a, err := b.b.Attributes(ctx, key)
	if err != nil {
		return 0, notExist(err)
	}
	return a.Size, nil
}

func (b blobBucket) Write(ctx context.Context, key string) (io.WriteCloser, error) {
	return b.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
}

func (b blobBucket) Delete(ctx context.Context, key string) error {
	return notExist(b.b.Delete(ctx, key))
}

func (b blobBucket) List(ctx context.Context, prefix string, fn func(string, int64, time.Time) error) error {
	it := b.b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if o.IsDir {
			continue
		}
		if err := fn(o.Key, o.Size, o.ModTime); err != nil {
			return err
		}
	}
}
