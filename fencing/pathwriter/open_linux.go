package pathwriter

import "syscall"

// directFlags make every write bypass the page cache and return only once
// the data is on the device; readFlags make reads bypass the page cache.
const (
	directFlags = syscall.O_DIRECT | syscall.O_DSYNC
	readFlags   = syscall.O_DIRECT
)
