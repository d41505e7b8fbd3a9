//go:build !linux

package calibrate

import (
	"context"
	"errors"
	"log/slog"
)

// RunReal needs Debian's Ceph daemons in a network namespace (ceph/cluster),
// which only Linux has.
func RunReal(ctx context.Context, e Experiment, log *slog.Logger) (*Observed, error) {
	return nil, errors.New("the real Ceph run needs Linux (ceph/cluster starts the daemons in a network namespace)")
}
