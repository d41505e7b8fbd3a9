//go:build linux

package driver

import (
	"cmp"
	"log/slog"
	"net/netip"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/backend/nftables"
)

func newNftables(o Options, protect []netip.Prefix, owner string, log *slog.Logger) (backend.Backend, error) {
	return nftables.New(o.NetNS, log, nftables.WithProtect(protect), nftables.WithTable(cmp.Or(o.Table, nftables.TableName)), nftables.WithOwner(owner))
}
