// Package s3server starts a real S3-compatible server for tests: versitygw
// (github.com/versity/versitygw, Apache-2.0) with its POSIX backend, on
// 127.0.0.1 at an ephemeral port, over a temporary directory, as a child of
// the test process. The directory is under QuietDir (/var/tmp), away from
// /tmp, unless KGW_S3SERVER_DIR or TMPDIR names another place.
//
// versitygw is a single Go binary with no cluster to form and no state
// outside its directory; `go install` builds it from the module proxy, at
// the pinned Version, in a few minutes on a fresh machine. SeaweedFS's
// module cannot be `go install`ed (its go.mod has replace directives) and is
// several times larger; Debian ships no S3 server but Ceph's radosgw, which
// needs a Ceph cluster.
//
// The binary is looked up, in order: $KGW_VERSITYGW; BinaryPath() (the
// first GOPATH's bin/versitygw-<Version>, where `make deps` installs it);
// else the test builds it there itself.
//
// Every server serves one bucket, Bucket, with the root credentials
// AccessKey and SecretKey. Start puts them in the process environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), where the AWS credential
// chain that objstore.Open uses finds them; Env gives them to a child
// process.
package s3server
