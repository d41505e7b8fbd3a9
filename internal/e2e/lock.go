package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ClusterLock coordinates the suites that `make e2e` runs at the same time
// on one cluster. Every suite holds it shared from Setup to Teardown; a spec
// that disrupts the cluster for everyone (the fencing rehearsal stops a
// worker's kubelet and taints the node out of service, which evicts every
// pod there) takes it exclusively for its duration, so no other suite runs
// meanwhile. It is flock(2) on the file LockPath(kubeconfig, "suites"), so
// it binds the processes of this machine, where make e2e runs the suites;
// shell steps take it with flock(1) on the same file.
//
// A suite that deploys a singleton world on the cluster (the fencing
// suite's fixed namespaces, which its Ceph run shares) also holds that
// world's lock exclusively, so that a second run waits instead of tearing
// the first one's world down. Locks are taken in one order, the world's
// before the cluster's: a suite waiting for the world then holds no share
// of the cluster, and the world's holder can still have the cluster alone.
type ClusterLock struct {
	f     *os.File // the cluster's lock ("suites")
	world *os.File // the world's lock, held exclusively; nil without a world
}

// LockPath is the lock file called name of the cluster of kubeconfig
// ("suites" is the ClusterLock's): next to the kubeconfig's real path, so
// that every way of naming it (a relative path, a symbolic link;
// fixtures/sim-explore/run.sh uses realpath(1)) meets at one file. Not
// <kubeconfig>.lock: kind and client-go create that file exclusively as
// their lock while they write the kubeconfig, and a lasting one makes
// `kind delete cluster` fail.
func LockPath(kubeconfig, name string) string {
	if abs, err := filepath.Abs(kubeconfig); err == nil {
		kubeconfig = abs
	}
	if real, err := filepath.EvalSymlinks(kubeconfig); err == nil {
		kubeconfig = real
	}
	return kubeconfig + "." + name + ".flock"
}

// LockShared takes the cluster's lock shared, waiting while a suite holds it
// exclusively. With a world name it first takes the lock
// LockPath(kubeconfig, world) exclusively, waiting while another run holds
// that world, and only then the cluster's. It polls so that ctx can end
// either wait.
func LockShared(ctx context.Context, kubeconfig, world string) (*ClusterLock, error) {
	l := &ClusterLock{}
	if world != "" {
		w, err := lockFile(ctx, LockPath(kubeconfig, world), true)
		if err != nil {
			return nil, err
		}
		l.world = w
	}
	f, err := lockFile(ctx, LockPath(kubeconfig, "suites"), false)
	if err != nil {
		l.Unlock()
		return nil, err
	}
	l.f = f
	return l, nil
}

// lockFile opens path (created if missing) and takes its flock, shared or
// exclusive, waiting until it can.
func lockFile(ctx context.Context, path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("e2e: lock: %w", err)
	}
	if err := take(ctx, f, exclusive); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Exclusive turns the shared hold into an exclusive one, waiting until no
// other suite holds the lock, and returns the function that turns it back
// into a shared hold. The change is not atomic (flock(2) drops the shared
// hold first), so two suites asking at once cannot deadlock.
func (l *ClusterLock) Exclusive(ctx context.Context) (release func() error, err error) {
	if l == nil {
		return func() error { return nil }, nil
	}
	if err := take(ctx, l.f, true); err != nil {
		// A failed non-blocking upgrade has dropped the shared hold: take
		// it again (the exclusive holder, if any, is another suite).
		_ = take(context.Background(), l.f, false)
		return nil, err
	}
	return func() error { return take(context.Background(), l.f, false) }, nil
}

// Unlock releases the cluster's lock, then the world's; safe on nil.
func (l *ClusterLock) Unlock() error {
	if l == nil {
		return nil
	}
	var errs []error
	for _, f := range []**os.File{&l.f, &l.world} {
		if *f != nil {
			errs = append(errs, (*f).Close()) // closing the last descriptor releases the flock
			*f = nil
		}
	}
	return errors.Join(errs...)
}

func take(ctx context.Context, f *os.File, exclusive bool) error {
	for {
		ok, err := tryFlock(f, exclusive)
		if err != nil {
			return fmt.Errorf("e2e: cluster lock %s: %w", f.Name(), err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("e2e: waiting for the cluster lock %s: %w", f.Name(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
