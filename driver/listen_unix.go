//go:build unix

package driver

import (
	"net"
	"sync"
	"syscall"
)

var umaskMu sync.Mutex

// listenUnix creates the socket with mode 0600 from the start: the umask is
// narrowed around bind(2), so there is no moment at which another user could
// connect before the chmod that follows.
func listenUnix(path string) (net.Listener, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
