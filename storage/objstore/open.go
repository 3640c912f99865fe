package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
)

// The schemes Open knows.
const (
	SchemeFile = "file"
	SchemeS3   = "s3"
)

// responseChecksum is gocloud's s3 parameter for the SDK's response
// checksum validation. Open makes it when_required unless the URL sets it:
// the SDK cannot validate a whole-object read of a multipart object (its
// checksum is of the parts) and prints "WARN Skipped validation of
// multipart checksum" to stderr on every such read, and the object tier
// checks every byte it reads against its own SHA-256s and CRCs anyway.
const responseChecksum = "response_checksum_validation"

// Open opens the bucket that rawURL (object.store.url) names. The caller
// closes it.
func Open(ctx context.Context, rawURL string) (*blob.Bucket, error) {
	u, err := Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == SchemeS3 {
		if err := checkRegion(ctx, u); err != nil {
			return nil, err
		}
		q := u.Query()
		if q.Get(responseChecksum) == "" {
			q.Set(responseChecksum, "when_required")
			u.RawQuery = q.Encode()
		}
	}
	if u.Scheme == SchemeFile {
		// fileblob's own options: create the directory, and keep temporary
		// files beside their objects (a rename out of os.TempDir fails
		// across file systems).
		q := u.Query()
		q.Set("create_dir", "true")
		q.Set("no_tmp_dir", "true")
		u.RawQuery = q.Encode()
	}
	b, err := mux.OpenBucketURL(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("object.store.url %s: %w", u.Redacted(), err)
	}
	return b, nil
}

// Parse checks rawURL as an object.store.url and returns it parsed: a
// known scheme, no credentials, a bucket for s3:// and an absolute path
// for file://. Parameters are checked by Open, by the scheme's driver.
func Parse(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the whole string, which may hold a password.
		return nil, errors.New("object.store.url: not a URL")
	}
	if u.User != nil {
		return nil, fmt.Errorf("object.store.url %s: credentials in the URL are not accepted; "+
			"set them in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or the AWS credential files", u.Redacted())
	}
	switch u.Scheme {
	case SchemeFile:
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("object.store.url %s: a file URL has no host: file:///absolute/path", u)
		}
		if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("object.store.url %s: a file URL needs an absolute path: file:///absolute/path", u)
		}
	case SchemeS3:
		if u.Host == "" {
			return nil, fmt.Errorf("object.store.url %s: no bucket: s3://bucket?region=...", u)
		}
		if u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("object.store.url %s: s3 takes no path after the bucket; "+
				"a key prefix is the prefix parameter (s3://bucket?prefix=dir/)", u)
		}
	case "":
		return nil, fmt.Errorf("object.store.url %q: no scheme; want file:// or s3://", rawURL)
	default:
		return nil, fmt.Errorf("object.store.url %s: unknown scheme %q; want file:// or s3://", u, u.Scheme)
	}
	return u, nil
}

// mux opens Open's URLs. It is its own (not gocloud's default mux) so that
// only the schemes above exist, and it gives s3 a fresh opener per URL:
// s3blob.URLOpener keeps a URL's ssetype and kmskeyid in its Options, which
// a shared opener would carry over to the next URL.
var mux = func() *blob.URLMux {
	m := new(blob.URLMux)
	m.RegisterBucket(SchemeFile, new(fileblob.URLOpener))
	m.RegisterBucket(SchemeS3, s3Opener{})
	return m
}()

// checkRegion refuses an s3 URL when no region is known: neither region=
// nor the AWS environment or profile gives one. The SDK would sign every
// request for region "" and the server refuse each one.
func checkRegion(ctx context.Context, u *url.URL) error {
	q := u.Query()
	if q.Get("region") != "" {
		return nil
	}
	var opts []func(*config.LoadOptions) error
	if p := q.Get("profile"); p != "" {
		opts = append(opts, config.WithSharedConfigProfile(p))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("object.store.url %s: %w", u.Redacted(), err)
	}
	if cfg.Region == "" {
		return fmt.Errorf("object.store.url %s: no region: add region= to the URL or set AWS_REGION", u.Redacted())
	}
	return nil
}

type s3Opener struct{}

func (s3Opener) OpenBucketURL(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	return new(s3blob.URLOpener).OpenBucketURL(ctx, u)
}
