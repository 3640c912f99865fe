package auth

// The credential store (the SCRAM credential store): one small JSON file in the data directory,
// replaced atomically under an exclusive lock, so that `kgateway users`
// can change it beside a running server (pebble locks its directories
// against a second process, a plain file does not) and the server sees
// the change at the next authentication.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// StoreFile and lockFile are the store's names inside its directory.
const (
	StoreFile = "credentials.json"
	lockFile  = "credentials.lock"
)

// User is one user's credentials, by mechanism name.
type User map[string]Credential

// storeFile is the file's content.
type storeFile struct {
	Version int             `json:"version"`
	Users   map[string]User `json:"users"`
}

// Store is the credential store of one directory. Safe for concurrent use
// by goroutines and processes.
type Store struct {
	dir    string
	shared Shared // instead of dir's file (credentials and ACLs shared in etcd)

	mu      sync.Mutex
	users   map[string]User
	stamp   fileStamp // of the file users was read from
	version int64     // of the shared document users was decoded from
	decoded bool      // users is the shared document's
}

// fileStamp identifies one version of the file: every write is a rename
// of a new file, so the inode changes even when the time does not.
type fileStamp struct {
	ino   uint64
	size  int64
	mtime time.Time
	ok    bool
}

func stampOf(fi os.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime(), ok: true}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
	}
	return st
}

// OpenStore returns the store kept in dir (created on the first write).
func OpenStore(dir string) *Store { return &Store{dir: dir} }

// Path is the store's file ("" for a shared store).
func (s *Store) Path() string {
	if s.shared != nil {
		return ""
	}
	return filepath.Join(s.dir, StoreFile)
}

// Lookup returns user's credential for mech, re-reading the file first if
// it changed since it was last read.
func (s *Store) Lookup(user, mech string) (Credential, bool, error) {
	users, err := s.current()
	if err != nil {
		return Credential{}, false, err
	}
	c, ok := users[user][mech]
	return c, ok, nil
}

// Users returns every user's credentials (shared: do not modify).
func (s *Store) Users() (map[string]User, error) { return s.current() }

// UserNames returns the users in name order.
func (s *Store) UserNames() ([]string, error) {
	users, err := s.current()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// current is the file's users, re-read when its stamp changed.
func (s *Store) current() (map[string]User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shared != nil {
		return s.sharedUsers()
	}
	fi, err := os.Stat(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		s.users, s.stamp = nil, fileStamp{}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if st := stampOf(fi); st != s.stamp || !s.stamp.ok {
		users, err := readStore(s.Path())
		if err != nil {
			return nil, err
		}
		s.users, s.stamp = users, st
	}
	return s.users, nil
}

func readStore(path string) (map[string]User, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]User{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeUsers(path, b)
}

// decodeUsers decodes a store's content (none: no users); name says
// where it came from.
func decodeUsers(name string, b []byte) (map[string]User, error) {
	if b == nil {
		return map[string]User{}, nil
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("auth: %s: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("auth: %s: unknown version %d", name, f.Version)
	}
	if f.Users == nil {
		f.Users = map[string]User{}
	}
	return f.Users, nil
}

// Update changes the store: under an exclusive lock on the directory's
// lock file it reads the file afresh, lets fn change the users, and
// replaces the file atomically (the SCRAM credential store). fn's error aborts the update. A
// shared store's update is a compare-and-swap of the document, and fn
// runs again on the newer users when another update won (credentials and ACLs shared in etcd).
func (s *Store) Update(fn func(users map[string]User) error) error {
	if s.shared != nil {
		return s.updateShared(fn)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	unlock, err := lockDir(filepath.Join(s.dir, lockFile))
	if err != nil {
		return err
	}
	defer unlock()
	users, err := readStore(s.Path())
	if err != nil {
		return err
	}
	if err := fn(users); err != nil {
		return err
	}
	b, err := json.MarshalIndent(storeFile{Version: 1, Users: users}, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.dir, StoreFile, append(b, '\n'))
}

// WriteFileAtomic writes name in dir (made if missing) so that a crash
// leaves either the old or the new file: a temporary file, fsync, rename
// over name, fsync dir. The servers' small documents (credentials, ACLs,
// quotas, client-metrics subscriptions) are kept this way.
func WriteFileAtomic(dir, name string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing there
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lockDir takes an exclusive flock on path, waiting for another holder
// (another process's update) to finish.
func lockDir(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("auth: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// SetCredential stores user's credential for mech.
func (s *Store) SetCredential(user, mech string, c Credential) error {
	return s.Update(func(users map[string]User) error {
		if users[user] == nil {
			users[user] = User{}
		}
		users[user][mech] = c
		return nil
	})
}

// ErrNoCredential is returned when a user (or a user's mechanism) to
// delete has no credential.
var ErrNoCredential = errors.New("auth: no such credential")

// DeleteCredential removes user's credential for mech, or every
// credential of user when mech is empty.
func (s *Store) DeleteCredential(user, mech string) error {
	return s.Update(func(users map[string]User) error {
		u, ok := users[user]
		if !ok || (mech != "" && u[mech].StoredKey == nil) {
			return fmt.Errorf("%w: user %q %s", ErrNoCredential, user, mech)
		}
		if mech == "" {
			delete(users, user)
			return nil
		}
		delete(u, mech)
		if len(u) == 0 {
			delete(users, user)
		}
		return nil
	})
}
