//go:build !linux

package driver

import (
	"errors"

	"github.com/fenceproof/fenceproof/driver/backend"
)

func newNftables(string) (backend.Backend, error) {
	return nil, errors.New("the nftables backend needs Linux")
}
