package e2e

import (
	"context"
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
type ClusterLock struct {
	f *os.File
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
// exclusively; it polls so that ctx can end the wait.
func LockShared(ctx context.Context, kubeconfig string) (*ClusterLock, error) {
	return Lock(ctx, LockPath(kubeconfig, "suites"), false)
}

// Lock takes the flock of the file path (created if missing), shared or
// exclusive, waiting until it can; it polls so that ctx can end the wait.
// A suite that deploys a singleton on the cluster (the fencing world's
// fixed namespaces) holds a lock of its own exclusively, so that a second
// run of it waits instead of tearing the first one's world down.
func Lock(ctx context.Context, path string, exclusive bool) (*ClusterLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("e2e: lock: %w", err)
	}
	l := &ClusterLock{f: f}
	if err := l.take(ctx, exclusive); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Exclusive turns the shared hold into an exclusive one, waiting until no
// other suite holds the lock, and returns the function that turns it back
// into a shared hold. The change is not atomic (flock(2) drops the shared
// hold first), so two suites asking at once cannot deadlock.
func (l *ClusterLock) Exclusive(ctx context.Context) (release func() error, err error) {
	if l == nil {
		return func() error { return nil }, nil
	}
	if err := l.take(ctx, true); err != nil {
		// A failed non-blocking upgrade has dropped the shared hold: take
		// it again (the exclusive holder, if any, is another suite).
		_ = l.take(context.Background(), false)
		return nil, err
	}
	return func() error { return l.take(context.Background(), false) }, nil
}

// Unlock releases the lock; safe on nil.
func (l *ClusterLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

func (l *ClusterLock) take(ctx context.Context, exclusive bool) error {
	for {
		ok, err := tryFlock(l.f, exclusive)
		if err != nil {
			return fmt.Errorf("e2e: cluster lock %s: %w", l.f.Name(), err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("e2e: waiting for the cluster lock %s: %w", l.f.Name(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
