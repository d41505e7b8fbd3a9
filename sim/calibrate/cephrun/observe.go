//go:build ceph && linux

package cephrun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// observer polls the cluster: the mgr's PG stats of the experiment's pool
// (states, data recovered) every half second, the mon's OSD map (up, in)
// and its quorum.
type observer struct {
	x      *run
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	raw      []rawSample
	acting   map[string][]int // PG -> acting OSDs, last seen
	osdUp    map[int]bool
	osdIn    map[int]bool
	ev       []calibrate.Event
	quorumOK bool
	notClean time.Time // the last sample not all active+clean
	// unclean names the PGs of the last sample not all active+clean and
	// their states
	unclean   []string
	lastClean bool
	seen      time.Time // the last sample's time
}

type rawSample struct {
	at      time.Time
	s       calibrate.Sample
	movedMB float64 // cumulative, since the pool was created
}

func newObserver(x *run) *observer {
	return &observer{x: x, osdUp: map[int]bool{}, osdIn: map[int]bool{}, acting: map[string][]int{}, quorumOK: true}
}

func (o *observer) start(ctx context.Context) {
	ctx, o.cancel = context.WithCancel(ctx)
	loop := func(every time.Duration, f func()) {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			for ctx.Err() == nil {
				t := time.Now()
				f()
				select {
				case <-ctx.Done():
				case <-time.After(every - time.Since(t)):
				}
			}
		}()
	}
	loop(500*time.Millisecond, o.pollPGs)
	loop(250*time.Millisecond, o.pollOSDs)
	loop(500*time.Millisecond, o.pollQuorum)
}

func (o *observer) stop() {
	if o.cancel != nil {
		o.cancel()
		o.wg.Wait()
	}
}

func (o *observer) pollPGs() {
	raw, _ := json.Marshal(map[string]any{"prefix": "pg dump", "dumpcontents": []string{"pgs"}, "format": "json"})
	out, _, err := o.x.admin.MgrCommand([][]byte{raw})
	at := time.Now()
	if err != nil {
		return
	}
	var d struct {
		PGStats []struct {
			PGID    string `json:"pgid"`
			State   string `json:"state"`
			Acting  []int  `json:"acting"`
			StatSum struct {
				BytesRecovered float64 `json:"num_bytes_recovered"`
			} `json:"stat_sum"`
		} `json:"pg_stats"`
	}
	if json.Unmarshal(out, &d) != nil {
		return
	}
	prefix := strconv.Itoa(o.x.poolID) + "."
	var s calibrate.Sample
	var moved float64
	var unclean []string
	n := 0
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range d.PGStats {
		if !strings.HasPrefix(p.PGID, prefix) {
			continue
		}
		n++
		o.acting[p.PGID] = p.Acting
		moved += p.StatSum.BytesRecovered / (1 << 20)
		st := "+" + p.State + "+"
		switch {
		case !strings.Contains(st, "+active+"):
			s.Inactive++
		case p.State == "active+clean" || strings.HasPrefix(p.State, "active+clean+scrub") || strings.HasPrefix(p.State, "active+clean+deep"):
			s.Clean++
		default:
			s.Active++
		}
		if p.State != "active+clean" && !strings.HasPrefix(p.State, "active+clean+scrub") && !strings.HasPrefix(p.State, "active+clean+deep") {
			unclean = append(unclean, p.PGID+" "+p.State)
		}
		if strings.Contains(st, "+recovering+") || strings.Contains(st, "+backfilling+") {
			s.Recovering++
		}
		if strings.Contains(st, "_wait+") {
			s.Waiting++
		}
	}
	if n != o.x.e.PGs {
		return
	}
	for id := range o.osdUp {
		if o.osdUp[id] {
			s.Up++
		}
		if o.osdIn[id] {
			s.In++
		}
	}
	if k := len(o.raw); k > 0 {
		moved = max(moved, o.raw[k-1].movedMB) // PG stats move with a PG's primary; the sum never goes back
	}
	o.raw = append(o.raw, rawSample{at: at, s: s, movedMB: moved})
	o.seen = at
	o.lastClean = s.Clean == n
	if !o.lastClean {
		o.notClean = at
		o.unclean = unclean
	}
}

func (o *observer) pollOSDs() {
	out, err := o.x.cmd(map[string]any{"prefix": "osd dump", "format": "json"})
	at := time.Now()
	if err != nil {
		return
	}
	var d struct {
		OSDs []struct {
			OSD int `json:"osd"`
			Up  int `json:"up"`
			In  int `json:"in"`
		} `json:"osds"`
	}
	if json.Unmarshal(out, &d) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range d.OSDs {
		wasIn, known := o.osdIn[s.OSD]
		if known && !wasIn && s.In == 1 && !o.x.t0.IsZero() {
			o.ev = append(o.ev, calibrate.Event{At: o.x.since(at), What: "in", OSD: s.OSD, Note: "osd dump"})
		}
		o.osdUp[s.OSD], o.osdIn[s.OSD] = s.Up == 1, s.In == 1
	}
}

func (o *observer) pollQuorum() {
	_, err := o.x.cmd(map[string]any{"prefix": "quorum_status", "format": "json"})
	at := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil && !o.quorumOK && !o.x.t0.IsZero() {
		o.ev = append(o.ev, calibrate.Event{At: o.x.since(at), What: "quorum", OSD: -1, Note: "quorum_status answered again"})
	}
	o.quorumOK = err == nil
}

// waitClean waits until every PG of the pool is active+clean in a sample
// taken after since and, if since is set, some sample after it was not
// (or 20 s passed without one: the action moved no PG).
func (o *observer) waitClean(ctx context.Context, since time.Time, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		ok := o.lastClean && o.seen.After(since) && (since.IsZero() || o.notClean.After(since) || time.Since(since) > 20*time.Second)
		o.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("the PGs were not all active+clean within %s", limit)
}

// waitSettled waits until every PG has been active+clean for quiet (the
// last sample not clean is that old); after limit it gives up and says
// which PGs were not.
func (o *observer) waitSettled(ctx context.Context, quiet, limit time.Duration) error {
	start := time.Now()
	deadline := start.Add(limit)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		ok := o.lastClean && o.seen.After(start) && time.Since(o.notClean) >= quiet
		o.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Errorf("the PGs were not active+clean for %s within %s (last not clean: %s)", quiet, limit, strings.Join(o.unclean, ", "))
}

// waitDown waits until every OSD of osds is marked down and returns when
// it saw that.
func (o *observer) waitDown(ctx context.Context, osds []int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		down := true
		for _, id := range osds {
			up, known := o.osdUp[id]
			down = down && known && !up
		}
		o.mu.Unlock()
		if down {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return time.Time{}, fmt.Errorf("osds %v were not marked down within %s", osds, limit)
}

// waitMoved waits until recovery and backfill moved want MB since t0.
func (o *observer) waitMoved(ctx context.Context, want float64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	base := o.movedAt(o.x.t0)
	for time.Now().Before(deadline) {
		o.mu.Lock()
		got := 0.0
		if k := len(o.raw); k > 0 {
			got = o.raw[k-1].movedMB - base
		}
		o.mu.Unlock()
		if got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%.1f MB not moved within %s", want, limit)
}

func (o *observer) movedAt(t time.Time) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := 0.0
	for _, r := range o.raw {
		if r.at.After(t) {
			break
		}
		v = r.movedMB
	}
	return v
}

// displacedMB is the data the PGs with an OSD of hosts hold there: what
// losing them displaces.
func (o *observer) displacedMB(hosts []int) float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	on := map[int]bool{}
	for _, h := range hosts {
		for _, id := range o.x.e.OSDs(h) {
			on[id] = true
		}
	}
	n := 0
	for _, acting := range o.acting {
		for _, id := range acting {
			if on[id] {
				n++
			}
		}
	}
	return float64(n*o.x.e.Objects*o.x.e.ObjectKiB) / 1024
}

// placement is every PG's acting OSDs as last seen, by PG number (the
// hex after the pool id), primary first.
func (o *observer) placement() [][]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([][]int, o.x.e.PGs)
	for id, acting := range o.acting {
		_, seed, ok := strings.Cut(id, ".")
		n, err := strconv.ParseInt(seed, 16, 32)
		if !ok || err != nil || n < 0 || int(n) >= len(out) {
			return nil
		}
		out[n] = slices.Clone(acting)
	}
	for _, osds := range out {
		if len(osds) != o.x.e.Size {
			return nil // not every PG seen complete: none rather than a wrong one
		}
	}
	return out
}

// samples are the pool's samples on the experiment's clock, the data moved
// counted from t0, starting with the state at t0.
func (o *observer) samples() []calibrate.Sample {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []calibrate.Sample
	var base float64
	first := true
	for i, r := range o.raw {
		if r.at.Before(o.x.t0) {
			continue
		}
		if first {
			first = false
			prev := r
			if i > 0 {
				prev = o.raw[i-1]
			}
			base = prev.movedMB
			s := prev.s
			s.At = 0
			out = append(out, s)
		}
		s := r.s
		s.At = round3(o.x.since(r.at))
		s.MovedMB = round3(r.movedMB - base)
		out = append(out, s)
	}
	return out
}

func (o *observer) events() []calibrate.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]calibrate.Event(nil), o.ev...)
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// The cluster log: the mon's decisions with their times.
var clogEvents = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`^osd\.(\d+) failed \(`), "down"},
	{regexp.MustCompile(`^Marking osd\.(\d+) out`), "out"},
	{regexp.MustCompile(`^osd\.(\d+) \[[^\]]*\] boot$`), "up"},
	{regexp.MustCompile(`^mon\.\w+ is new leader, mons .* in quorum`), "quorum"},
}

// reClog is a cluster log line as the mon that wrote it logs it in its own
// log file: its time and the message.
var reClog = regexp.MustCompile(`^(\S+) \S+ +-?\d+ log_channel\(cluster\) log \[\w+\] : (.*)$`)

// clusterLog reads the mons' decisions since t0 from the cluster log lines
// each mon writes to its own log file (the cluster log's in-memory summary,
// `log last`, keeps only the last mon_log_max_summary entries).
func (x *run) clusterLog(ctx context.Context) ([]calibrate.Event, error) {
	var evs []calibrate.Event
	for _, id := range x.c.Mons() {
		f, err := os.Open(x.c.DaemonLog("mon." + id))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			m := reClog.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			t, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1])
			if err != nil || t.Before(x.t0.Add(-time.Second)) {
				continue
			}
			for _, c := range clogEvents {
				mm := c.re.FindStringSubmatch(m[2])
				if mm == nil {
					continue
				}
				osd := -1
				if len(mm) > 1 {
					osd, _ = strconv.Atoi(mm[1])
				}
				if c.what == "quorum" && t.Before(x.t0.Add(time.Second)) {
					continue
				}
				evs = append(evs, calibrate.Event{At: round3(x.since(t)), What: c.what, OSD: osd, Note: m[2]})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return evs, ctx.Err()
}

// ticks is the leader mon's tick: at ref + k period.
type ticks struct {
	ref    time.Time
	period time.Duration
}

// next is the first tick at or after t.
func (k ticks) next(t time.Time) time.Time {
	n := math.Ceil(float64(t.Sub(k.ref)) / float64(k.period))
	return k.ref.Add(time.Duration(n) * k.period)
}

// midway is the first time at or after t at which t + lead seconds falls
// half a period after a tick.
func (k ticks) midway(t time.Time, lead float64) time.Time {
	d := t.Add(seconds(lead))
	mid := k.next(d).Add(-k.period / 2)
	if mid.Before(d) {
		mid = mid.Add(k.period)
	}
	return mid.Add(-seconds(lead))
}

var reTick = regexp.MustCompile(`^(\S+) \S+ 10 mon\.\w+@\d+\(leader\)\.health tick`)

// measureTicks turns the leader mon's debug log up for 11 s and reads its
// ticks (OSDMonitor::tick runs with them).
func measureTicks(ctx context.Context, c *cluster.Cluster, admin *librados.Conn) (ticks, error) {
	raw, _ := json.Marshal(map[string]any{"prefix": "quorum_status", "format": "json"})
	out, _, err := admin.MonCommand(raw)
	if err != nil {
		return ticks{}, err
	}
	var q struct {
		Leader string `json:"quorum_leader_name"`
	}
	if err := json.Unmarshal(out, &q); err != nil || q.Leader == "" {
		return ticks{}, fmt.Errorf("quorum_status: no leader in %s", out)
	}
	daemon := "mon." + q.Leader
	if err := c.TellConfig(ctx, daemon, "debug_mon", "10/10"); err != nil {
		return ticks{}, err
	}
	start := time.Now()
	time.Sleep(11 * time.Second)
	if err := c.TellConfig(ctx, daemon, "debug_mon", "1/5"); err != nil {
		return ticks{}, err
	}
	f, err := os.Open(c.DaemonLog(daemon))
	if err != nil {
		return ticks{}, err
	}
	defer f.Close()
	var ts []time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := reTick.FindStringSubmatch(sc.Text()); m != nil {
			if t, err := time.Parse("2006-01-02T15:04:05.000-0700", m[1]); err == nil && t.After(start) {
				ts = append(ts, t)
			}
		}
	}
	if len(ts) < 2 {
		return ticks{}, fmt.Errorf("%s: %d ticks in its log in 11 s", daemon, len(ts))
	}
	p := ts[len(ts)-1].Sub(ts[0]) / time.Duration(len(ts)-1)
	return ticks{ref: ts[len(ts)-1], period: p}, nil
}
