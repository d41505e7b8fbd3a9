//go:build linux

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func quick() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 500*time.Millisecond)
}

// Suites share the cluster; a disruptive spec has it alone only when no
// other suite holds it, and no suite starts while it does.
func TestClusterLockSharedAndExclusive(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	a, err := LockShared(context.Background(), kc, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unlock()
	b, err := LockShared(context.Background(), kc, "")
	if err != nil {
		t.Fatalf("a second suite cannot share the cluster: %v", err)
	}
	ctx, cancel := quick()
	defer cancel()
	if _, err := a.Exclusive(ctx); err == nil {
		t.Fatal("exclusive while another suite holds the cluster")
	}
	// The failed attempt kept a's shared hold: an exclusive c must wait.
	c, err := LockShared(context.Background(), kc, "")
	if err != nil {
		t.Fatal(err)
	}
	b.Unlock()
	ctx2, cancel2 := quick()
	defer cancel2()
	if _, err := c.Exclusive(ctx2); err == nil {
		t.Fatal("exclusive while a suite whose upgrade failed still shares the cluster")
	}
	c.Unlock()

	release, err := a.Exclusive(context.Background())
	if err != nil {
		t.Fatalf("exclusive once alone: %v", err)
	}
	ctx3, cancel3 := quick()
	defer cancel3()
	if d, err := LockShared(ctx3, kc, ""); err == nil {
		d.Unlock()
		t.Fatal("a suite started while another had the cluster alone")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	d, err := LockShared(context.Background(), kc, "")
	if err != nil {
		t.Fatalf("shared after the release: %v", err)
	}
	d.Unlock()
	if (*ClusterLock)(nil).Unlock() != nil {
		t.Error("Unlock on nil")
	}
}

// Regression: the lock file was <kubeconfig>.lock, which kind and client-go
// create exclusively while they write the kubeconfig, so `kind delete
// cluster` failed with "failed to lock config file: file exists".
func TestLockPathIsNotKindsKubeconfigLock(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if got := LockPath(kc, "suites"); got == kc+".lock" || filepath.Dir(got) != filepath.Dir(kc) {
		t.Errorf("LockPath = %q", got)
	}
}

// Regression: the fencing suite took its world's lock after its share of
// the cluster. With the Ceph run of the same suite started beside it, the
// waiting run held a share, so the holder's exclusive spec (the DR
// rehearsal) waited for it, and it waited for the holder's world: both
// hung until the waiting run's BeforeSuite timed out 20 minutes later.
func TestWorldWaiterDoesNotBlockTheHoldersExclusiveSpec(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	holder, err := LockShared(context.Background(), kc, "fencing")
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, stopWaiting := context.WithTimeout(context.Background(), time.Minute)
	defer stopWaiting()
	waiter := make(chan *ClusterLock, 1)
	go func() {
		l, err := LockShared(waitCtx, kc, "fencing")
		if err != nil {
			t.Errorf("the second run never got the world: %v", err)
		}
		waiter <- l
	}()
	time.Sleep(500 * time.Millisecond) // the second run is waiting now
	select {
	case <-waiter:
		t.Fatal("a second run got the world while the first held it")
	default:
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	release, err := holder.Exclusive(ctx)
	if err != nil {
		t.Fatalf("the world's holder cannot have the cluster alone while a second run waits for the world: %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := holder.Unlock(); err != nil {
		t.Fatal(err)
	}
	second := <-waiter
	if second == nil {
		t.Fatal("no lock for the second run")
	}
	if err := second.Unlock(); err != nil {
		t.Fatal(err)
	}
}
