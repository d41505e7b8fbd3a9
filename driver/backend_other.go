//go:build !linux

package driver

import (
	"errors"
	"log/slog"

	"github.com/fenceproof/fenceproof/driver/backend"
)

func newNftables(string, *slog.Logger) (backend.Backend, error) {
	return nil, errors.New("the nftables backend needs Linux")
}
