//go:build !unix

package refstore

import "net"

// listenPrivate listens on a unix socket; where there is no umask the
// socket's permissions are the platform's default.
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
