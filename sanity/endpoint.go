package sanity

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// target turns unix:// and tcp:// endpoints into a gRPC target, refusing
// strings that cannot name a socket: unix:// without an absolute path,
// tcp:// without host:port.
func target(endpoint string) (string, error) {
	switch {
	case strings.HasPrefix(endpoint, "unix://"):
		path := strings.TrimPrefix(endpoint, "unix://")
		if !strings.HasPrefix(path, "/") || len(path) < 2 || strings.HasSuffix(path, "/") {
			return "", fmt.Errorf("endpoint %q: unix endpoints need an absolute socket path (unix:///path.sock)", endpoint)
		}
		return endpoint, nil
	case strings.HasPrefix(endpoint, "tcp://"):
		hp := strings.TrimPrefix(endpoint, "tcp://")
		host, port, err := net.SplitHostPort(hp)
		if err != nil || port == "" || strings.ContainsAny(host+port, "/ ") {
			return "", fmt.Errorf("endpoint %q: tcp endpoints need host:port (tcp://127.0.0.1:9000)", endpoint)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("endpoint %q: port %q is not between 1 and 65535", endpoint, port)
		}
		return "passthrough:///" + hp, nil
	}
	return "", fmt.Errorf("endpoint %q: must start with unix:// or tcp://", endpoint)
}
