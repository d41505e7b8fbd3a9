//go:build unix

package driver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// DefaultEndpoint returns unix://DIR/driver.sock in a directory that only
// the driver's user can write: $XDG_RUNTIME_DIR/fenceproof, /run/fenceproof
// as root, else $TMPDIR/fenceproof-UID. The directory is created with mode
// 0700; an existing one owned by another user, or writable by group or
// others, is an error (someone else could replace the socket).
func DefaultEndpoint() (string, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	dir := filepath.Join(base, "fenceproof")
	switch {
	case base != "":
	case os.Geteuid() == 0:
		dir = "/run/fenceproof"
	default:
		dir = filepath.Join(os.TempDir(), "fenceproof-"+strconv.Itoa(os.Geteuid()))
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	return "unix://" + filepath.Join(dir, "driver.sock"), nil
}

// privateDir creates dir 0700 or checks that an existing one is ours and
// not writable by anyone else.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory (a symlink?)", dir)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("socket directory %s belongs to uid %d, not to this user (%d)", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("socket directory %s is writable by group or others (mode %s); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}
