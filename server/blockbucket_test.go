package server

import (
	"context"
	"errors"
	"sync/atomic"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// blockingBucket is a bucket over inner whose reads, while block is set,
// wait for their context to end, like a read from a stalled object store
// (the S3 SDK gives up only when its context does). blocked counts the
// reads waiting now. Closing gate (when set) lets the waiting reads go
// on.
type blockingBucket struct {
	inner   *blob.Bucket
	block   atomic.Bool
	blocked atomic.Int32
	gate    chan struct{}
}

func newBlockingBucket(inner *blob.Bucket) (*blockingBucket, *blob.Bucket) {
	bb := &blockingBucket{inner: inner}
	return bb, blob.NewBucket(bb)
}

func (b *blockingBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (b *blockingBucket) As(any) bool                            { return false }
func (b *blockingBucket) ErrorAs(error, any) bool                { return false }
func (b *blockingBucket) Close() error                           { return b.inner.Close() }

func (b *blockingBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := b.inner.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ContentType: a.ContentType, Metadata: a.Metadata, CreateTime: a.CreateTime,
		ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag}, nil
}

func (b *blockingBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	objs, next, err := b.inner.ListPage(ctx, opts.PageToken, max(opts.PageSize, 1000),
		&blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

func (b *blockingBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if b.block.Load() {
		b.blocked.Add(1)
		select {
		case <-ctx.Done():
			b.blocked.Add(-1)
			return nil, ctx.Err()
		case <-b.gate: // nil: never
			b.blocked.Add(-1)
		}
	}
	r, err := b.inner.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return blobReader{r}, nil
}

type blobReader struct{ r *blob.Reader }

func (r blobReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r blobReader) Close() error               { return r.r.Close() }
func (r blobReader) As(any) bool                { return false }
func (r blobReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

func (b *blockingBucket) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	w, err := b.inner.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType, Metadata: opts.Metadata})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (b *blockingBucket) Copy(ctx context.Context, dst, src string, _ *driver.CopyOptions) error {
	return b.inner.Copy(ctx, dst, src, nil)
}

func (b *blockingBucket) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return b.inner.Delete(ctx, key)
}

func (b *blockingBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errors.New("no signed URLs")
}
