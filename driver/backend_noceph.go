//go:build !ceph

package driver

import (
	"context"
	"errors"
	"log/slog"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// CephBuilt reports whether this binary has the Ceph backend.
const CephBuilt = false

func newCeph(context.Context, Options, string, *slog.Logger) (backend.Backend, error) {
	return nil, errors.New("this binary was built without the Ceph backend (it needs cgo and librados-dev): use bin/fenceproof-ceph (make build-ceph, go build -tags ceph)")
}
