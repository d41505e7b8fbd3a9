//go:build !linux

package pathwriter

import "os"

// Without O_DIRECT (not Linux): synchronous writes through the page cache.
const (
	directFlags = os.O_SYNC
	readFlags   = 0
)
