//go:build windows

package endpoint

import (
	"context"
	"net"

	"github.com/Microsoft/go-winio"
)

func dial(ctx context.Context, scheme, addr string) (net.Conn, error) {
	if scheme == "npipe" {
		return winio.DialPipeContext(ctx, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}
