package fencing

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// evidence is one read of everything a check judges: the storage's
// accepted-writes and enforcement logs, every driver pod's log and the
// case's writer logs, fetched concurrently (each is one round trip through
// the API server).
// until is taken before any read: every write a writer saw acknowledged by
// then is in the audit log read after it (the storage makes a write durable
// before it answers); taken after, the last writes would look lost.
type evidence struct {
	until   int64
	audit   []byte
	enforce []byte
	drivers map[string][]byte
	writers map[string][]byte // writer id -> its log; absent when its pod is gone
}

// collect reads the evidence of the case.
func (c *fcase) collect(ctx context.Context) *evidence {
	w := c.w
	ev := &evidence{until: time.Now().UnixNano(), writers: map[string][]byte{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	took := map[string]time.Duration{}
	timed := func(what string, f func()) {
		t0 := time.Now()
		f()
		mu.Lock()
		took[what] = time.Since(t0).Round(time.Millisecond)
		mu.Unlock()
	}
	wg.Add(3)
	go func() { defer wg.Done(); timed("audit", func() { ev.audit = w.auditLog(ctx) }) }()
	go func() {
		defer wg.Done()
		timed("enforce", func() {
			if b, err := w.store.log(ctx, w, enforceLog); err == nil {
				ev.enforce = b
			}
		})
	}()
	go func() { defer wg.Done(); timed("drivers", func() { ev.drivers = w.logs.all(ctx) }) }()
	for id := range c.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			timed(id, func() {
				if b, err := w.k.PodLogs(ctx, c.ns, id, "writer", false); err == nil {
					mu.Lock()
					ev.writers[id] = b
					mu.Unlock()
				}
			})
		}()
	}
	wg.Wait()
	logf("[%s] evidence read in %s: %v (audit log %d bytes)", c.id, time.Since(time.Unix(0, ev.until)).Round(time.Millisecond), took, len(ev.audit))
	Expect(ev.audit).NotTo(BeNil(), "the storage's log of accepted writes could not be read")
	return ev
}

// accepted is the audit log parsed.
func (ev *evidence) accepted() []fencekind.Accepted {
	return fencekind.ParseLines[fencekind.Accepted](ev.audit)
}

// attempts is a writer's log parsed (nil when its pod is gone).
func (ev *evidence) attempts(id string) []fencekind.Attempt {
	return fencekind.ParseLines[fencekind.Attempt](ev.writers[id])
}
