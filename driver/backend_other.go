//go:build !linux

package driver

import (
	"errors"
	"log/slog"
	"net/netip"

	"github.com/fenceproof/fenceproof/driver/backend"
)

func newNftables(Options, []netip.Prefix, string, *slog.Logger) (backend.Backend, error) {
	return nil, errors.New("the nftables backend needs Linux")
}
