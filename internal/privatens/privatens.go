// Package privatens creates unnamed network namespaces without leaving the
// calling goroutine's OS thread in them.
package privatens

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// New creates a private network namespace on a locked OS thread and puts
// the thread back into its original namespace before unlocking it.
func New() (netns.NsHandle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return netns.None(), err
	}
	defer orig.Close()
	ns, err := netns.New()
	if err != nil {
		return netns.None(), err
	}
	if err := netns.Set(orig); err != nil {
		// The thread is stuck in the new namespace: never unlock it, so the
		// Go runtime discards it instead of reusing it.
		runtime.LockOSThread()
		ns.Close()
		return netns.None(), fmt.Errorf("restore thread netns: %w", err)
	}
	return ns, nil
}
