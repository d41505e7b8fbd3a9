// Package endpoint is the endpoint grammar every fenceproof command shares:
// unix:///path (a socket, or a directory of sockets), tcp://host:port and
// npipe://./pipe/ (csi-proxy's named pipes on Windows). Parse reads a
// string once; what it is used for (a client dials it, a server listens on
// it, it names a directory of endpoints) decides which schemes and forms are
// accepted, and the error names the form wanted.
package endpoint

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Use is what an endpoint is for.
type Use int

// Uses.
const (
	// Dial: a client connects to unix:///path.sock or tcp://host:port
	// (a host and a port from 1 to 65535).
	Dial Use = iota
	// Listen: a server binds unix:///path.sock or tcp://[host]:port (no host:
	// every interface; port 0: one the system picks).
	Listen
	// Directory: a directory of endpoints, unix:///dir or npipe://./pipe/.
	Directory
)

// Schemes.
const (
	Unix  = "unix"
	TCP   = "tcp"
	NPipe = "npipe"
)

// PipeDir is the directory of Windows named pipes an npipe endpoint names.
const PipeDir = `\\.\pipe\`

// Endpoint is a parsed endpoint.
type Endpoint struct {
	// Scheme is unix, tcp or npipe.
	Scheme string
	// Address is the socket or directory path (unix), host:port (tcp) or
	// the pipe directory (npipe).
	Address string
}

// String is the endpoint in the grammar's form.
func (e Endpoint) String() string {
	if e.Scheme == NPipe {
		return "npipe://./pipe/"
	}
	return e.Scheme + "://" + e.Address
}

// Target is the gRPC client target of a unix or tcp endpoint.
func (e Endpoint) Target() string {
	if e.Scheme == TCP {
		return "passthrough:///" + e.Address
	}
	return e.String()
}

// Parse reads s for a use.
func Parse(s string, use Use) (Endpoint, error) {
	scheme, rest, _ := strings.Cut(s, "://")
	e := Endpoint{Scheme: scheme, Address: rest}
	switch {
	case use == Directory && scheme == Unix:
		if !filepath.IsAbs(rest) {
			return Endpoint{}, fmt.Errorf("endpoint %q: want unix:///absolute/dir", s)
		}
	case use == Directory && scheme == NPipe:
		e.Address = PipeDir
	case use == Directory:
		return Endpoint{}, fmt.Errorf("endpoint %q: want unix:///dir (simulated host) or npipe://./pipe/ (csi-proxy on Windows)", s)
	case scheme == Unix:
		if !strings.HasPrefix(rest, "/") || len(rest) < 2 || strings.HasSuffix(rest, "/") {
			return Endpoint{}, fmt.Errorf("endpoint %q: unix endpoints need an absolute socket path (unix:///path.sock)", s)
		}
	case scheme == TCP:
		return e, checkHostPort(s, rest, use)
	default:
		return Endpoint{}, fmt.Errorf("endpoint %q: must start with unix:// or tcp://", s)
	}
	return e, nil
}

// checkHostPort checks a tcp endpoint's host:port.
func checkHostPort(s, hp string, use Use) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil || port == "" || strings.ContainsAny(host+port, "/ ") || (use == Dial && host == "") {
		return fmt.Errorf("endpoint %q: tcp endpoints need host:port (tcp://127.0.0.1:9000)", s)
	}
	low := 1
	if use == Listen {
		low = 0
	}
	if n, err := strconv.Atoi(port); err != nil || n < low || n > 65535 {
		return fmt.Errorf("endpoint %q: port %q is not between %d and 65535", s, port, low)
	}
	return nil
}
