// Package objstore opens the object store that the broker setting
// object.store.url names, as a gocloud.dev/blob bucket. It knows two
// schemes:
//
//	file:///var/lib/kgateway/objects
//	s3://bucket?endpoint=http://127.0.0.1:8333&region=us-east-1&use_path_style=true
//
// file:// is a directory (created when missing) through gocloud's fileblob:
// for tests and a single machine. Temporary files are written next to their
// final path (fileblob's no_tmp_dir), so the rename that publishes an object
// never crosses file systems. fileblob does not fsync: a file:// store is
// not durable across a power loss.
//
// s3:// is any S3-compatible service through gocloud's s3blob (AWS SDK v2).
// The host is the bucket; the query takes s3blob's and gocloud's AWS
// parameters: endpoint, region, use_path_style (or s3ForcePathStyle),
// disable_https, profile, anonymous, request_checksum_calculation,
// response_checksum_validation (when_required unless set: the SDK cannot
// check a whole read of a multipart object and would warn on stderr at
// each; readers of the store check what they read themselves), ssetype, kmskeyid, and prefix (a key prefix
// for every object, for any scheme). Credentials never appear in the URL:
// they come from the standard AWS chain (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared files, web identity,
// the instance role). A URL with a user or password is refused, so the
// setting can always be logged. Nor is a URL accepted without a region,
// from region= or from the AWS environment or profile: requests signed for
// no region all fail.
//
// Check writes, reads back and deletes a probe object: a startup test that
// the bucket exists and the credentials may use it.
package objstore
