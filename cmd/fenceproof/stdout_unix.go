//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// withStdoutSilenced runs f with file descriptor 1 pointed at /dev/null
// (Ginkgo writes there directly, past os.Stdout), then restores it.
func withStdoutSilenced(f func() error) error {
	saved, err := unix.Dup(1)
	if err != nil {
		return err
	}
	defer unix.Close(saved)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	if err := unix.Dup2(int(null.Fd()), 1); err != nil {
		return err
	}
	err = f()
	if derr := unix.Dup2(saved, 1); derr != nil && err == nil {
		err = derr
	}
	return err
}
