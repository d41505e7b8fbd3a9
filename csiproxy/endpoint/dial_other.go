//go:build !windows

package endpoint

import (
	"context"
	"fmt"
	"net"
)

func dial(ctx context.Context, scheme, addr string) (net.Conn, error) {
	if scheme != "unix" {
		return nil, fmt.Errorf("%s endpoints are reachable only on Windows", scheme)
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}
