package fsys

import "testing"

func TestKernelVersion(t *testing.T) {
	for _, c := range []struct {
		release      string
		major, minor int
		ok           bool
	}{
		{"6.18.44-fc-v1272", 6, 18, true},
		{"5.8.0", 5, 8, true},
		{"5.10-rc1", 5, 10, true},
		{"4.19.0-25-amd64", 4, 19, true},
		{"garbage", 0, 0, false},
		{"5.x", 0, 0, false},
	} {
		major, minor, err := kernelVersion(c.release)
		if (err == nil) != c.ok || c.ok && (major != c.major || minor != c.minor) {
			t.Errorf("%q: %d.%d %v", c.release, major, minor, err)
		}
	}
}

// TestOpenFileSystemSync: on this machine's kernel (5.8+, as CI's) the OS
// FS offers syncfs, and a sync of a directory's file system succeeds.
func TestOpenFileSystemSync(t *testing.T) {
	if !syncfsReportsErrors() {
		t.Skip("kernel before 5.8")
	}
	s, err := OS().(FileSystemSyncer).OpenFileSystemSync(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}
