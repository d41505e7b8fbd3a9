//go:build linux

package driver

import (
	"log/slog"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/backend/nftables"
)

func newNftables(netNS string, log *slog.Logger) (backend.Backend, error) {
	return nftables.New(netNS, log)
}
