//go:build !unix

package driver

import "net"

// listenUnix listens on a unix socket; platforms without umask rely on the
// chmod that follows.
func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }
