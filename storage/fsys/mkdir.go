package fsys

import (
	"errors"
	iofs "io/fs"
	"path/filepath"
)

// MkdirAllSync creates dir and its missing parents and makes each created
// directory durable before it returns: POSIX makes a new directory entry
// durable only when its parent directory is synced, so it syncs the parent
// of every directory it created, up to and including the first ancestor
// that already existed (as pebble does for its own directories). An
// existing dir costs one ReadDir and no sync.
func MkdirAllSync(fs FS, dir string, perm uint32) error {
	var created []string // missing directories, deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		_, err := fs.ReadDir(d)
		if err == nil {
			break
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, perm); err != nil {
		return err
	}
	for _, d := range created {
		if err := fs.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}
