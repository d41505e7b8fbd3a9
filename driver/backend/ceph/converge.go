package ceph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// snapshot is the blocklist of the OSD map at one epoch.
type snapshot struct {
	epoch     int
	list      map[entry]string // entries of the forms this backend makes → expiry
	instances int              // other entries (instance entries: ip:port/nonce)
}

func (b *Backend) dump(ctx context.Context) (snapshot, error) {
	r, _ := call(ctx, b.mon, "", command{"prefix": "osd dump", "format": "json"})
	if r.err != nil {
		return snapshot{}, r.err
	}
	return parseDump(r.out)
}

func parseDump(raw []byte) (snapshot, error) {
	var d struct {
		Epoch          int               `json:"epoch"`
		Blocklist      map[string]string `json:"blocklist"`
		RangeBlocklist map[string]string `json:"range_blocklist"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return snapshot{}, fmt.Errorf("osd dump: %v", err)
	}
	if d.Epoch <= 0 {
		return snapshot{}, errors.New("osd dump: no epoch")
	}
	s := snapshot{epoch: d.Epoch, list: map[entry]string{}}
	for k, v := range d.Blocklist {
		if e, ok := parseCephAddr(k); ok && !e.Range {
			s.list[e] = v
		} else {
			s.instances++
		}
	}
	for k, v := range d.RangeBlocklist {
		if !strings.HasPrefix(k, "cidr:") {
			k = "cidr:" + k
		}
		if e, ok := parseCephAddr(k); ok && e.Range {
			s.list[e] = v
		} else {
			s.instances++
		}
	}
	return s, nil
}

// action is one blocklist command of a change.
type action struct {
	e      entry
	add    bool
	expire time.Duration
	until  string // the expiry the mon reported for an add
	err    error  // the command's error; nil once answered OK
}

func (a *action) command() command {
	c := command{"prefix": "osd blocklist", "addr": a.e.arg()}
	if a.e.Range {
		c["range"] = "range"
	}
	if a.add {
		c["blocklistop"] = "add"
		c["expire"] = seconds(a.expire)
	} else {
		c["blocklistop"] = "rm"
	}
	return c
}

// plan compares the OSD map with the entries wanted and the record, and
// returns the commands to send. It stamps in-flight adds the map shows and
// forgets entries that are gone or that another actor replaced.
//
// A wanted entry the map already holds but that is not this backend's (an
// identical entry another actor made) is relied upon as it is: Ceph keeps
// the first expiry of an entry (re-adding it does not extend it) and
// removing it to add our own would lift the fence in between. It is never
// removed; if it disappears, Verify reports it missing and the driver adds
// its own.
func (b *Backend) plan(snap snapshot, want map[entry]bool) []*action {
	var acts []*action
	b.mu.Lock()
	defer b.mu.Unlock()
	for e := range want {
		k := e.String()
		until, present := snap.list[e]
		o, own := b.rec.Entries[k]
		switch {
		case !present:
			acts = append(acts, &action{e: e, add: true, expire: b.o.Expiry})
		case own && o.ours(until):
			if o.Until == "" {
				o.Until = until
				b.rec.Entries[k] = o
			}
		default:
			if own {
				delete(b.rec.Entries, k) // replaced by another actor since
			}
			b.o.Log.Info("ceph backend: a fence is in force by another actor's identical blocklist entry; relying on it, never removing it", "entry", k, "until", until)
		}
	}
	for k, o := range b.rec.Entries {
		e, _ := parseEntryKey(k)
		if want[e] {
			continue
		}
		until, present := snap.list[e]
		switch {
		case !present:
			delete(b.rec.Entries, k)
		case !o.ours(until):
			b.o.Log.Info("ceph backend: leaving a blocklist entry another actor replaced", "entry", k, "until", until, "ours", o.Until)
			delete(b.rec.Entries, k)
		default:
			acts = append(acts, &action{e: e})
		}
	}
	slices.SortFunc(acts, func(x, y *action) int { return strings.Compare(x.e.String(), y.e.String()) })
	return acts
}

// commitStats describe a change that converged: the OSD map epoch it
// reached, the entries added and removed, how long the mon took (from the
// first command to the map read back) and the OSD barrier.
type commitStats struct {
	epoch          int
	added, removed int
	mon, barrier   time.Duration
	sent           []*action // the commands sent; their answers are final once late is closed
}

// ambiguous reports whether a's answer leaves its outcome unknown: the
// command was sent and librados gave up waiting (the mon may still commit
// it). A refusal the mon answered is final; a command never sent did
// nothing.
func (a *action) ambiguous() bool {
	var me *MonError
	return a.err != nil && errors.As(a.err, &me) && me.Errno == errnoTimedOut
}

// inverse is the command that undoes a, whatever became of a: it is sent
// on the same mon session after a, so the mon applies it after a.
func (a *action) inverse(expiry time.Duration) *action {
	return &action{e: a.e, add: !a.add, expire: expiry}
}

// converge makes the blocklist hold the wanted entries and none of this
// backend's others. It returns nil once the mon answered every command and
// the OSD map shows the result at a newer epoch. When ctx ends first it
// returns an error and late, closed once every command sent has its answer
// (each answer updates the record as it comes).
func (b *Backend) converge(ctx context.Context, want map[entry]bool) (late <-chan struct{}, st commitStats, err error) {
	snap, err := b.dump(ctx)
	if err != nil {
		return nil, st, err
	}
	st.epoch = snap.epoch
	acts := b.plan(snap, want)
	if len(acts) == 0 {
		return nil, st, b.saveRecord()
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < b.o.MinTime {
		return nil, st, fmt.Errorf("ceph backend: %s left before the deadline, less than the %s a blocklist commit needs (--ceph-min-time); nothing sent: %w",
			time.Until(dl).Round(time.Millisecond), b.o.MinTime, context.DeadlineExceeded)
	}
	// The record names every add before it is sent, so an entry whose
	// answer is lost (a crash, a timeout) is still recognised as ours.
	now := time.Now().UnixNano()
	b.mu.Lock()
	for _, a := range acts {
		if a.add {
			b.rec.Entries[a.e.String()] = owned{SentNs: now, Expiry: a.expire}
		}
	}
	b.mu.Unlock()
	if err := b.saveRecord(); err != nil {
		return nil, st, err
	}
	t0 := time.Now()
	st.sent = acts
	done := b.send(ctx, acts)
	select {
	case <-done:
	case <-ctx.Done():
		return done, st, fmt.Errorf("ceph backend: the mon did not answer every blocklist command before the deadline (what commits later is undone): %w", ctx.Err())
	}
	var errs []error
	for _, a := range acts {
		if a.err != nil {
			errs = append(errs, a.err)
		}
	}
	if len(errs) > 0 {
		return nil, st, fmt.Errorf("ceph backend: %d of %d blocklist commands failed: %w", len(errs), len(acts), errors.Join(errs[:min(len(errs), 3)]...))
	}
	if st.epoch, err = b.confirm(ctx, snap.epoch, acts); err != nil {
		return nil, st, err
	}
	st.mon = time.Since(t0)
	t1 := time.Now()
	if err := b.barrier(ctx, st.epoch, acts); err != nil {
		return nil, st, err
	}
	st.barrier = time.Since(t1)
	for _, a := range acts {
		if a.add {
			st.added++
		} else {
			st.removed++
		}
	}
	return nil, st, b.saveRecord()
}

// send runs the commands, at most Concurrency at a time, and closes the
// returned channel once every command sent has its answer (commands not
// yet sent when ctx ends are not sent). Answers update the record.
func (b *Backend) send(ctx context.Context, acts []*action) <-chan struct{} {
	done := make(chan struct{})
	slots := make(chan struct{}, b.o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards the actions' fields
	go func() {
		defer close(done)
		for _, a := range acts {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				mu.Lock()
				a.err = fmt.Errorf("ceph %s: not sent: %w", a.command(), ctx.Err())
				mu.Unlock()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				r, late := call(context.Background(), b.mon, "", a.command())
				if late != nil {
					r = <-late
				}
				mu.Lock()
				a.err = r.err
				if r.err == nil && a.add {
					a.until = untilOf(r.status)
				}
				mu.Unlock()
				b.answered(a)
			}()
		}
		wg.Wait()
	}()
	return done
}

// untilOf reads the expiry from "blocklisting 10.1.2.3:0/0 until
// 2026-11-24T13:16:14.976769+0000 (3600 sec)".
func untilOf(status string) string {
	_, rest, ok := strings.Cut(status, " until ")
	if !ok {
		return ""
	}
	until, _, _ := strings.Cut(rest, " ")
	if _, err := parseUntil(until); err != nil {
		return ""
	}
	return until
}

// answered records a command's answer.
func (b *Backend) answered(a *action) {
	if a.err != nil {
		return
	}
	k := a.e.String()
	b.mu.Lock()
	defer b.mu.Unlock()
	if !a.add {
		delete(b.rec.Entries, k)
	} else if o, ok := b.rec.Entries[k]; ok && a.until != "" {
		o.Until = a.until
		b.rec.Entries[k] = o
	}
}

// confirm reads the OSD map back until it is at an epoch after before and
// shows every add with the expiry the mon reported and no removed entry;
// the mon answers a blocklist command once the epoch is committed, so this
// normally takes one read (a lagging mon of a multi-mon cluster may take
// more). It fails when ctx ends first.
func (b *Backend) confirm(ctx context.Context, before int, acts []*action) (int, error) {
	wait := 10 * time.Millisecond
	var last snapshot
	var why string
	for {
		s, err := b.dump(ctx)
		if err == nil {
			last = s
			if why = mismatch(s, before, acts); why == "" {
				b.mu.Lock()
				for _, a := range acts {
					if k := a.e.String(); a.add && a.until == "" {
						if o, ok := b.rec.Entries[k]; ok {
							o.Until = s.list[a.e]
							b.rec.Entries[k] = o
						}
					}
				}
				b.mu.Unlock()
				return s.epoch, nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return 0, fmt.Errorf("ceph backend: the mon answered every blocklist command, then reading the OSD map back failed: %w", err)
			}
			return 0, fmt.Errorf("ceph backend: the mon answered every blocklist command but the OSD map does not show the change: %s (epoch %d, %d before): %w", why, last.epoch, before, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// barrier waits until every PG operates under epoch (when the connection
// can tell, unless Options.NoOSDBarrier): after a fence, so that no write
// is accepted after the ack; after an unfence too, so that no write is
// refused after the ack (measured without it: one refusal a few ms after
// an Unfence's ack).
func (b *Backend) barrier(ctx context.Context, epoch int, acts []*action) error {
	ob, ok := b.mon.(OSDBarrier)
	if !ok || b.o.NoOSDBarrier || len(acts) == 0 {
		return nil
	}
	if err := ob.Barrier(ctx, epoch); err != nil {
		return fmt.Errorf("ceph backend: epoch %d is committed but not every PG answered under it: %w", epoch, err)
	}
	return nil
}

// mismatch says how s differs from what acts made, or "".
func mismatch(s snapshot, before int, acts []*action) string {
	if s.epoch <= before {
		return "the epoch did not move"
	}
	for _, a := range acts {
		until, present := s.list[a.e]
		switch {
		case a.add && !present:
			return a.e.String() + " is not in the blocklist"
		case a.add && a.until != "" && until != a.until:
			return fmt.Sprintf("%s expires at %s, the mon said %s", a.e, until, a.until)
		case !a.add && present:
			return a.e.String() + " is still in the blocklist"
		}
	}
	return ""
}

func (b *Backend) saveRecord() error {
	b.mu.Lock()
	r := record{Owner: b.rec.Owner, Entries: maps.Clone(b.rec.Entries)}
	b.mu.Unlock()
	if err := r.save(b.o.RecordPath); err != nil {
		return fmt.Errorf("ceph backend: saving the ownership record: %w", err)
	}
	return nil
}

// Verify compares the blocklist with the entries the fenced set needs:
// missing ones (expired, removed by hand) and this backend's entries that
// are no longer wanted (an add that committed after its caller gave up)
// are drift; the driver then re-applies.
func (b *Backend) Verify(ctx context.Context) error {
	snap, err := b.dump(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	want := b.want(b.set)
	var drift []string
	for e := range want {
		if _, present := snap.list[e]; !present {
			drift = append(drift, e.String()+" missing (expired or removed by hand)")
		}
	}
	for k, o := range b.rec.Entries {
		e, _ := parseEntryKey(k)
		if until, present := snap.list[e]; !want[e] && present && o.ours(until) {
			drift = append(drift, k+" left in the blocklist")
		}
	}
	b.mu.Unlock()
	if len(drift) == 0 {
		return nil
	}
	slices.Sort(drift)
	return fmt.Errorf("%w: %d blocklist entries: %s", backend.ErrDrift, len(drift), strings.Join(drift[:min(len(drift), 5)], "; "))
}

// InForce returns the prefixes of the fenced set whose every entry the
// OSD map's blocklist holds now: what List reports.
func (b *Backend) InForce(ctx context.Context) ([]netip.Prefix, error) {
	snap, err := b.dump(ctx)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []netip.Prefix
	var buf []entry
	for p := range b.set {
		buf = entriesOf(p, b.ranges, buf[:0])
		all := true
		for _, e := range buf {
			if _, ok := snap.list[e]; !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, p)
		}
	}
	return out, nil
}
