package fsys

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// OpenFileSystemSync opens dir to syncfs(2) its file system. syncfs
// reports write-back errors of any file of the file system only since
// Linux 5.8 (through the superblock's error sequence, sampled when the
// descriptor is opened); on an older kernel it would report none, so it
// is refused there.
func (osFS) OpenFileSystemSync(dir string) (FileSystemSync, error) {
	if !syncfsReportsErrors() {
		return nil, errors.New("fsys: syncfs does not report write-back errors before Linux 5.8")
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return fsSync{d}, nil
}

type fsSync struct{ d *os.File }

func (s fsSync) Sync() error {
	for {
		err := unix.Syncfs(int(s.d.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "syncfs", Path: s.d.Name(), Err: err}
			}
			return nil
		}
	}
}

func (s fsSync) Close() error { return s.d.Close() }

// syncfsReportsErrors tells whether the running kernel is Linux 5.8 or
// later.
func syncfsReportsErrors() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	major, minor, err := kernelVersion(unix.ByteSliceToString(u.Release[:]))
	return err == nil && (major > 5 || major == 5 && minor >= 8)
}

// kernelVersion parses "6.18.44-fc" as 6, 18.
func kernelVersion(release string) (major, minor int, err error) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("fsys: kernel release %q", release)
	}
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, err
	}
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits == 0 {
		return 0, 0, fmt.Errorf("fsys: kernel release %q", release)
	}
	if digits > 0 {
		parts[1] = parts[1][:digits]
	}
	minor, err = strconv.Atoi(parts[1])
	return major, minor, err
}
