//go:build !unix

package driver

import (
	"errors"
	"net"
)

// listenUnix listens on a unix socket; platforms without umask rely on the
// chmod that follows.
func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

// DefaultEndpoint has no private-directory default off unix systems: name
// an endpoint.
func DefaultEndpoint() (string, error) {
	return "", errors.New("no default endpoint on this system; pass --endpoint")
}
