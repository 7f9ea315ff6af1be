package keyring

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoFile is wrapped by ReadFile's error when the key file does not
// exist.
var ErrNoFile = errors.New("keyring: no key file")

// maxFileBytes bounds a key file (64 keys take about 10 KiB).
const maxFileBytes = 1 << 20

// ReadFile reads a key file. Like ssh with a private key, it refuses a
// file that its group or others may read or write (mode bits 0o077): the
// file holds every key of the service. Errors name the file and the
// problem; a malformed file wraps ErrInvalid, a missing one ErrNoFile.
func ReadFile(path string) (*Ring, error) {
	r, _, err := readFile(path)
	return r, err
}

// readFile is ReadFile, also returning what was read (for Keeper's
// change detection).
func readFile(path string) (*Ring, fs.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s does not exist", ErrNoFile, path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("keyring: opening the key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("keyring: reading the key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("keyring: the key file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, fmt.Errorf("keyring: the key file %s has permissions %04o: it must be readable by its owner only (chmod 600 %s)", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("keyring: reading the key file: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, nil, fmt.Errorf("%w: %s is larger than 1 MiB", ErrInvalid, path)
	}
	r, err := Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, info, nil
}

// WriteFile replaces the key file with r, atomically: the ring is written
// to a new file (mode 0600) beside it, synced, and renamed over the old
// one, so a reader (a server watching the file) sees the old ring or the
// new, never a part.
func WriteFile(path string, r *Ring) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	if _, err := tmp.Write(r.Marshal()); err != nil {
		tmp.Close()
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("keyring: writing the key file: %w", err)
	}
	done = true
	syncDir(dir)
	return nil
}

// CreateFile writes r to a new key file (mode 0600); it fails when the
// file exists, so that a key is never replaced by accident (what was
// signed and sealed with it would be lost).
func CreateFile(path string, r *Ring) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("keyring: the key file %s exists already", path)
	}
	if err != nil {
		return fmt.Errorf("keyring: creating the key file: %w", err)
	}
	_, err = f.Write(r.Marshal())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("keyring: creating the key file: %w", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes a new directory entry durable; where directories cannot
// be synced, there is nothing more to do.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
