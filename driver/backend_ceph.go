//go:build ceph

package driver

import (
	"context"
	"log/slog"

	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/driver/backend"
	cephbackend "github.com/fenceproof/fenceproof/driver/backend/ceph"
)

// CephBuilt reports whether this binary has the Ceph backend.
const CephBuilt = true

func newCeph(ctx context.Context, o Options, owner string, log *slog.Logger) (backend.Backend, error) {
	c := o.Ceph
	conn, err := librados.Dial(librados.Options{Conf: c.Conf, User: c.User, Keyring: c.Keyring, MonHost: c.MonHost, NetNS: c.NetNS, MonTimeout: c.MonTimeout})
	if err != nil {
		return nil, err
	}
	b, err := cephbackend.New(ctx, conn, cephbackend.Options{RecordPath: c.recordPath(o.StatePath), Owner: owner, Expiry: c.Expiry,
		Ranges: c.Ranges, MaxEntries: c.MaxEntries, MinTime: c.MinTime, NoOSDBarrier: c.NoOSDBarrier, Log: log})
	if err != nil {
		conn.Shutdown()
		return nil, err
	}
	return b, nil
}
