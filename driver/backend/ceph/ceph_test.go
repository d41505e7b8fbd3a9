package ceph

// Unit tests over a simulated mon (fakeMon): the parsing of Ceph's
// spellings, the ownership decisions and the deadline handling. What a
// real mon does is tested against Debian's Ceph in the *_ceph_test.go
// files (build tag ceph); the simulation is for what a real mon will not
// do on demand (answer late on cue) and for speed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// fakeMon keeps an OSD map's blocklist the way Pacific's mon does: every
// change is a new epoch, adding an existing entry keeps its first expiry,
// removing a missing one changes nothing. hold, when set, blocks blocklist
// changes until it is closed (a mon that answers late).
type fakeMon struct {
	mu     sync.Mutex
	epoch  int
	list   map[string]string // Ceph's key (10.1.2.3:0/0, cidr:10.2.0.0:0/16) → until
	ranges map[string]string
	hold   chan struct{}
	calls  int
	// timeOut is how many of the next blocklist commands librados gives
	// up on (ETIMEDOUT) while the mon keeps them: they commit later, in
	// order, before the next blocklist command or at flush.
	timeOut int
	kept    []map[string]any
}

// flush commits the commands the mon kept (a frozen mon that resumes).
func (m *fakeMon) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.kept {
		m.apply(c)
	}
	m.kept = nil
}

func newFakeMon() *fakeMon {
	return &fakeMon{epoch: 10, list: map[string]string{}, ranges: map[string]string{}}
}

type errno int

func (e errno) Error() string  { return fmt.Sprintf("ret=%d", int(e)) }
func (e errno) ErrorCode() int { return int(e) }

func cephKey(addr string, isRange bool) string {
	p, err := netip.ParsePrefix(addr)
	if isRange && err == nil {
		return fmt.Sprintf("cidr:%s/%d", netip.AddrPortFrom(p.Addr(), 0), p.Bits())
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		return netip.AddrPortFrom(a, 0).String() + "/0"
	}
	return addr
}

func (m *fakeMon) MonCommand(cmd []byte) ([]byte, string, error) {
	var c map[string]any
	if err := json.Unmarshal(cmd, &c); err != nil {
		return nil, "", errno(-22)
	}
	m.mu.Lock()
	m.calls++
	hold := m.hold
	m.mu.Unlock()
	switch c["prefix"] {
	case "osd dump":
		m.mu.Lock()
		defer m.mu.Unlock()
		out, _ := json.Marshal(map[string]any{"epoch": m.epoch, "blocklist": m.list, "range_blocklist": m.ranges})
		return out, "", nil
	case "get_command_descriptions":
		return []byte(`{"cmd001":{"sig":["osd","blocklist",{"name":"range","type":"CephChoices","strings":"range"},{"name":"blocklistop","type":"CephChoices","strings":"add|rm"},{"name":"addr","type":"CephEntityAddr"}]}}`), "", nil
	case "osd blocklist":
		if hold != nil {
			<-hold
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.timeOut > 0 {
			m.timeOut--
			m.kept = append(m.kept, c)
			return nil, "", errno(-110)
		}
		for _, k := range m.kept {
			m.apply(k)
		}
		m.kept = nil
		return m.apply(c)
	}
	return nil, "unknown command", errno(-22)
}

// apply changes the blocklist as the mon does for one blocklist command;
// m.mu is held.
func (m *fakeMon) apply(c map[string]any) ([]byte, string, error) {
	{
		_, isRange := c["range"]
		key := cephKey(c["addr"].(string), isRange)
		list := m.list
		if isRange {
			list = m.ranges
		}
		switch c["blocklistop"] {
		case "add":
			exp := time.Duration(c["expire"].(float64) * float64(time.Second))
			until := time.Now().Add(exp).UTC().Format("2006-01-02T15:04:05.000000+0000")
			if _, ok := list[key]; !ok {
				list[key] = until
			}
			m.epoch++
			return nil, "blocklisting " + key + " until " + until + " (x sec)", nil
		case "rm":
			if _, ok := list[key]; !ok {
				return nil, key + " isn't blocklisted", nil
			}
			delete(list, key)
			m.epoch++
			return nil, "un-blocklisting " + key, nil
		}
	}
	return nil, "unknown blocklistop", errno(-22)
}

func (m *fakeMon) MonCommandTarget(string, []byte) ([]byte, string, error) {
	return nil, "", errno(-22)
}
func (m *fakeMon) Self() (uint64, uint64) { return 1, 1 }
func (m *fakeMon) Shutdown()              {}

func (m *fakeMon) has(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, a := m.list[key]
	_, r := m.ranges[key]
	return a || r
}

func newBackend(t *testing.T, mon Mon, rec string, edit func(*Options)) *Backend {
	t.Helper()
	o := Options{RecordPath: rec, Owner: "owner-1", Log: slog.New(slog.DiscardHandler), SettleTimeout: 5 * time.Second}
	if edit != nil {
		edit(&o)
	}
	b, err := New(context.Background(), mon, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func pfx(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestParseCephAddr(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3:0/0":              "10.1.2.3",
		"v2:10.1.2.3:0/0":           "10.1.2.3",
		"[2001:db8::5]:0/0":         "2001:db8::5",
		"cidr:10.2.0.0:0/16":        "range 10.2.0.0/16",
		"cidr:[2001:db8::]:0/32":    "range 2001:db8::/32",
		"10.1.2.3:0/12345":          "", // one client instance: never ours
		"10.1.2.3:6800/0":           "",
		"cidr:10.2.3.4:0/16":        "", // host bits set: not a form this backend makes
		"cidr:10.2.0.0:0/33":        "",
		"(unrecognized address)":    "",
		"[::ffff:10.1.2.3]:0/0":     "10.1.2.3",
		"cidr:[2001:db8::1]:0/128":  "range 2001:db8::1/128",
		"cidr:[2001:db8::1]:99/128": "",
	} {
		e, ok := parseCephAddr(in)
		got := ""
		if ok {
			got = e.String()
		}
		if got != want {
			t.Errorf("parseCephAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEntriesAndCap(t *testing.T) {
	var buf []entry
	if got := entriesOf(netip.MustParsePrefix("10.0.0.0/30"), false, buf); len(got) != 4 || got[3].String() != "10.0.0.3" {
		t.Errorf("per-address /30: %v", got)
	}
	if got := entriesOf(netip.MustParsePrefix("10.0.0.7/32"), true, nil); len(got) != 1 || got[0].String() != "range 10.0.0.7/32" {
		t.Errorf("a host with ranges: %v", got)
	}
	b := &Backend{o: Options{MaxEntries: 1024}}
	if err := b.CheckChange(pfx("10.0.0.0/22")); err != nil {
		t.Errorf("a /22 is 1024 entries, the cap: %v", err)
	}
	err := b.CheckChange(pfx("10.0.0.0/16"))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "65536 addresses") {
		t.Errorf("a /16 without ranges: %v", err)
	}
	if err := b.CheckChange(pfx("2001:db8::/32")); !errors.Is(err, ErrLimit) {
		t.Errorf("an IPv6 /32 without ranges: %v", err)
	}
	b.ranges = true
	if err := b.CheckChange(pfx("10.0.0.0/8", "2001:db8::/32")); err != nil {
		t.Errorf("ranges: %v", err)
	}
}

// TestOwnership: foreign entries (an address entry by hand, an identical
// range another actor made, an instance entry) are never removed nor
// listed as the backend's own; the backend's entries survive a new
// Backend on the same record and go when unwanted; an entry of the
// backend's that another actor replaced is left alone.
func TestOwnership(t *testing.T) {
	mon := newFakeMon()
	mon.list["10.0.0.1:0/0"] = "2030-01-01T00:00:00.000000+0000"
	mon.list["10.0.0.9:0/777"] = "2030-01-01T00:00:00.000000+0000"
	mon.ranges["cidr:10.1.0.0:0/24"] = "2030-01-01T00:00:00.000000+0000"
	rec := filepath.Join(t.TempDir(), "rec.json")
	b := newBackend(t, mon, rec, nil)
	ctx := context.Background()
	if err := b.Apply(ctx, pfx("10.0.0.1/32", "10.1.0.0/24", "10.2.0.0/24")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cidr:10.0.0.1:0/32", "cidr:10.2.0.0:0/24", "10.0.0.1:0/0"} {
		if !mon.has(k) {
			t.Errorf("%s missing", k)
		}
	}
	in, _ := b.InForce(ctx)
	if len(in) != 3 {
		t.Errorf("InForce %v", in)
	}
	// A new backend on the same record knows its entries.
	b2 := newBackend(t, mon, rec, nil)
	if err := b2.Apply(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{"cidr:10.0.0.1:0/32": false, "cidr:10.2.0.0:0/24": false,
		"10.0.0.1:0/0": true, "cidr:10.1.0.0:0/24": true, "10.0.0.9:0/777": true} {
		if mon.has(k) != want {
			t.Errorf("after Apply(nil): %s present %v, want %v", k, !want, want)
		}
	}
	// Replaced by another actor (removed and added again: a new expiry).
	if err := b2.Apply(ctx, pfx("10.3.0.0/24")); err != nil {
		t.Fatal(err)
	}
	mon.mu.Lock()
	mon.ranges["cidr:10.3.0.0:0/24"] = "2031-01-01T00:00:00.000000+0000"
	mon.mu.Unlock()
	if err := b2.Apply(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !mon.has("cidr:10.3.0.0:0/24") {
		t.Errorf("an entry another actor replaced was removed")
	}
	// Another owner's record is refused.
	if _, err := New(ctx, mon, Options{RecordPath: rec, Owner: "owner-2", Log: slog.New(slog.DiscardHandler)}); err == nil {
		t.Errorf("a record of another driver instance was accepted")
	}
}

// TestVerifyAndRepair: an entry removed by hand is drift; Apply restores
// it.
func TestVerifyAndRepair(t *testing.T) {
	mon := newFakeMon()
	b := newBackend(t, mon, filepath.Join(t.TempDir(), "rec.json"), nil)
	ctx := context.Background()
	if err := b.Change(ctx, pfx("10.4.0.0/24"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	mon.mu.Lock()
	delete(mon.ranges, "cidr:10.4.0.0:0/24")
	mon.mu.Unlock()
	if err := b.Verify(ctx); !errors.Is(err, backend.ErrDrift) {
		t.Fatalf("Verify after a hand removal: %v", err)
	}
	if in, _ := b.InForce(ctx); len(in) != 0 {
		t.Errorf("InForce reports a removed entry: %v", in)
	}
	if err := b.Apply(ctx, pfx("10.4.0.0/24")); err != nil || !mon.has("cidr:10.4.0.0:0/24") {
		t.Fatalf("repair: %v", err)
	}
}

// TestLateAnswerIsUndone: the mon answers after the caller's deadline; the
// change fails, nothing is reported in force, and once the late answer
// arrives the entry is removed again; the next change waits for that.
func TestLateAnswerIsUndone(t *testing.T) {
	mon := newFakeMon()
	b := newBackend(t, mon, filepath.Join(t.TempDir(), "rec.json"), nil)
	if err := b.Change(context.Background(), pfx("10.5.0.1/32"), nil); err != nil {
		t.Fatal(err)
	}
	mon.mu.Lock()
	mon.hold = make(chan struct{})
	mon.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	err := b.Change(ctx, pfx("10.5.0.2/32"), nil)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Change with a mon that does not answer: %v", err)
	}
	mon.mu.Lock()
	close(mon.hold)
	mon.hold = nil
	mon.mu.Unlock()
	// The next change waits for the undo of the late one.
	if err := b.Change(context.Background(), pfx("10.5.0.3/32"), nil); err != nil {
		t.Fatal(err)
	}
	if mon.has("cidr:10.5.0.2:0/32") || !mon.has("cidr:10.5.0.1:0/32") || !mon.has("cidr:10.5.0.3:0/32") {
		mon.mu.Lock()
		t.Fatalf("after the late answer: %v", mon.ranges)
	}
}

// TestNothingSentTooCloseToTheDeadline: with less than MinTime left, no
// command is sent.
func TestNothingSentTooCloseToTheDeadline(t *testing.T) {
	mon := newFakeMon()
	b := newBackend(t, mon, filepath.Join(t.TempDir(), "rec.json"), func(o *Options) { o.MinTime = time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := b.Change(ctx, pfx("10.6.0.0/24"), nil); err == nil || !strings.Contains(err.Error(), "nothing sent") {
		t.Fatalf("Change: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if mon.has("cidr:10.6.0.0:0/24") {
		t.Fatal("an entry was sent with less than MinTime left")
	}
}

func TestRecordIsCanonical(t *testing.T) {
	mon := newFakeMon()
	rec := filepath.Join(t.TempDir(), "rec.json")
	b := newBackend(t, mon, rec, nil)
	if err := b.Apply(context.Background(), pfx("10.7.0.0/24", "2001:db8::/64")); err != nil {
		t.Fatal(err)
	}
	r, err := loadRecord(rec, "owner-1")
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(r.Entries))
	for k, o := range r.Entries {
		keys = append(keys, k)
		if o.Until == "" {
			t.Errorf("%s has no stamp", k)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"range 10.7.0.0/24", "range 2001:db8::/64"}) {
		t.Errorf("record %v", keys)
	}
}

// settled waits until the undo of a failed change is done.
func settled(b *Backend) {
	b.sem <- struct{}{}
	<-b.sem
}

// TestTimedOutUnfenceCommittedLateKeepsTheFence pins a lost fence: an
// Unfence whose rm librados gave up on (ETIMEDOUT) failed, so the fence
// stays wanted, and the undo's dump still showed the entry; the mon then
// committed the rm, and the node was unfenced while the driver listed it
// as fenced. The undo now re-adds it behind the late rm.
func TestTimedOutUnfenceCommittedLateKeepsTheFence(t *testing.T) {
	mon := newFakeMon()
	b := newBackend(t, mon, filepath.Join(t.TempDir(), "rec.json"), nil)
	ctx := context.Background()
	if err := b.Change(ctx, pfx("10.8.0.1/32"), nil); err != nil {
		t.Fatal(err)
	}
	mon.mu.Lock()
	mon.timeOut = 1
	mon.mu.Unlock()
	if err := b.Change(ctx, nil, pfx("10.8.0.1/32")); err == nil {
		t.Fatal("an unfence librados gave up on succeeded")
	}
	settled(b)
	mon.flush()
	if !mon.has("cidr:10.8.0.1:0/32") {
		t.Fatal("the unfence failed, yet its late rm left the node unfenced")
	}
	if err := b.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// TestTimedOutFenceCommittedLateIsRemoved pins a stray fence: a Fence
// whose add librados gave up on failed; the undo's dump did not show the
// entry yet, so the record forgot it, and when the mon committed it late
// it was another actor's entry, never removed. The undo now removes it
// behind the late add.
func TestTimedOutFenceCommittedLateIsRemoved(t *testing.T) {
	mon := newFakeMon()
	b := newBackend(t, mon, filepath.Join(t.TempDir(), "rec.json"), nil)
	ctx := context.Background()
	mon.mu.Lock()
	mon.timeOut = 1
	mon.mu.Unlock()
	if err := b.Change(ctx, pfx("10.8.0.2/32"), nil); err == nil {
		t.Fatal("a fence librados gave up on succeeded")
	}
	settled(b)
	mon.flush()
	if mon.has("cidr:10.8.0.2:0/32") {
		t.Fatal("the fence failed, yet its late add stays in force")
	}
	if in, err := b.InForce(ctx); err != nil || len(in) != 0 {
		t.Fatalf("InForce %v, %v", in, err)
	}
}
