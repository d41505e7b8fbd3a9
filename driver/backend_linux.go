//go:build linux

package driver

import (
	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/backend/nftables"
)

func newNftables(netNS string) (backend.Backend, error) {
	return nftables.New(netNS)
}
