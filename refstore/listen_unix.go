//go:build unix

package refstore

import (
	"net"
	"syscall"
)

// listenPrivate listens on a unix socket created with mode 0660 from the
// start (umask during bind), so no other user can connect in between.
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o117)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
