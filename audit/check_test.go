package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// Times in these tables are small integers of nanoseconds; only their order
// and differences matter to the oracle.

func fenceEv(start, ack int64, cidrs ...string) DriverEvent {
	return DriverEvent{Kind: EventFence, OK: true, Code: "OK", StartNs: start, TNs: ack, CIDRs: cidrs, Source: "driver.log:f"}
}

func unfenceEv(start, ack int64, cidrs ...string) DriverEvent {
	return DriverEvent{Kind: EventUnfence, OK: true, Code: "OK", StartNs: start, TNs: ack, CIDRs: cidrs, Source: "driver.log:u"}
}

func readyEv(t int64, cidrs ...string) DriverEvent {
	return DriverEvent{Kind: EventReady, OK: true, Code: "OK", StartNs: t, TNs: t, CIDRs: cidrs, Source: "driver.log:r"}
}

func failed(ev DriverEvent) DriverEvent { ev.OK, ev.Code = false, "Unknown"; return ev }

func write(client, addr string, seq uint64, t int64) refstore.AuditRecord {
	return refstore.AuditRecord{Client: client, Addr: addr, Seq: seq, TNs: t}
}

// want is a violation expected by a table case: kind, client and seq.
type want struct {
	kind   string
	client string
	seq    uint64
}

func TestCheckTable(t *testing.T) {
	const B, A, B6 = "10.0.0.5:4000", "10.0.1.7:4000", "[2001:db8::5]:4000"
	cases := []struct {
		name    string
		driver  []DriverEvent
		audit   []refstore.AuditRecord
		writers []writer.Attempt
		skew    time.Duration
		since   int64
		enforce []refstore.EnforceRecord
		want    []want // every violation, in reported order
	}{
		{name: "enforcement before the ack is fine",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			enforce: []refstore.EnforceRecord{{TNs: 95, Generation: 1, CIDRs: []string{"10.0.0.5/32"}}}},
		{name: "enforcement after the ack is caught even without a write",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), fenceEv(190, 200, "10.0.1.0/24")},
			enforce: []refstore.EnforceRecord{{TNs: 95, Generation: 1, CIDRs: []string{"10.0.0.5/32"}}, {TNs: 300, Generation: 2, CIDRs: []string{"10.0.0.5/32", "10.0.1.0/24"}}},
			want:    []want{{KindEnforcedLate, "", 0}}},
		{name: "a fence covered by a wider enforced prefix counts as enforced",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			enforce: []refstore.EnforceRecord{{TNs: 95, Generation: 1, CIDRs: []string{"10.0.0.0/8"}}}},
		{name: "clean fence and unfence",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 80), write("b", B, 2, 220), write("a", A, 1, 150)}},
		{name: "write after the ack is caught",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 80), write("b", B, 2, 101), write("b", B, 3, 500)},
			want:   []want{{KindWriteAfterFence, "b", 2}, {KindWriteAfterFence, "b", 3}}},
		{name: "regression: write-at-exactly-the-ack-ns is not after it",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 100)}},
		{name: "write during the fence RPC, before its ack, is legitimate",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 95)}},
		{name: "write while the unfence RPC runs is legitimate",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 205), write("b", B, 2, 200)}},
		{name: "regression: IPv6 source in a fenced /64",
			driver: []DriverEvent{fenceEv(90, 100, "2001:db8::/64")},
			audit:  []refstore.AuditRecord{write("b6", B6, 1, 150), write("c6", "[2001:db8:1::5]:1", 1, 150)},
			want:   []want{{KindWriteAfterFence, "b6", 1}}},
		{name: "regression: IPv4-mapped source against an IPv4 fence",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.0/24")},
			audit:  []refstore.AuditRecord{write("b", "[::ffff:10.0.0.5]:4000", 1, 150)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "regression: IPv4-mapped fence against an IPv4 source",
			driver: []DriverEvent{fenceEv(90, 100, "::ffff:10.0.0.0/120")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 150)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "regression: host bits in the fenced CIDR; the unfence of the masked form lifts it",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.9/24"), unfenceEv(200, 210, "10.0.0.0/24")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 150), write("b", B, 2, 250)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "regression: overlapping fences, unfence of one keeps the other",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.0/24"), fenceEv(140, 150, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.0/24")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 250), write("c", "10.0.0.6:1", 1, 250), write("c", "10.0.0.6:1", 2, 190)},
			want:   []want{{KindWriteAfterFence, "c", 2}, {KindWriteAfterFence, "b", 1}}},
		{name: "regression: re-fencing an already fenced prefix keeps the first ack",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), fenceEv(290, 300, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 200)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "writes from unfenced sources during the window are fine",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("a", A, 1, 150), write("a", "10.0.0.4:1", 2, 150), write("a", "10.0.0.6:1", 3, 150)}},
		{name: "a failed Fence acknowledges nothing",
			driver: []DriverEvent{failed(fenceEv(90, 100, "10.0.0.5/32"))},
			audit:  []refstore.AuditRecord{write("b", B, 1, 150)}},
		{name: "a failed Unfence lifts nothing",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), failed(unfenceEv(200, 210, "10.0.0.5/32"))},
			audit:  []refstore.AuditRecord{write("b", B, 1, 250)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "regression: driver restart in the log keeps the fence",
			driver: []DriverEvent{readyEv(10), fenceEv(90, 100, "10.0.0.5/32"), readyEv(300, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 200), write("b", B, 2, 400)},
			want:   []want{{KindWriteAfterFence, "b", 1}, {KindWriteAfterFence, "b", 2}}},
		{name: "regression: a restart that forgets a fence does not lift it",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), readyEv(300)},
			audit:  []refstore.AuditRecord{write("b", B, 1, 400)},
			want:   []want{{KindWriteAfterFence, "b", 1}}},
		{name: "a log that starts mid-life: the ready line's fences hold from then",
			driver: []DriverEvent{readyEv(50, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 40), write("b", B, 2, 60)},
			want:   []want{{KindWriteAfterFence, "b", 2}}},
		{name: "several CIDRs in one Fence (pod CIDR and node IP)",
			driver: []DriverEvent{fenceEv(90, 100, "10.244.2.0/24", "172.18.0.4/32")},
			audit:  []refstore.AuditRecord{write("pod", "10.244.2.17:1", 1, 150), write("node", "172.18.0.4:1", 1, 160), write("other", "172.18.0.3:1", 1, 170)},
			want:   []want{{KindWriteAfterFence, "pod", 1}, {KindWriteAfterFence, "node", 1}}},
		{name: "skew tolerates writes within it of the ack",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			skew:   10,
			audit:  []refstore.AuditRecord{write("b", B, 1, 105), write("b", B, 2, 111)},
			want:   []want{{KindWriteAfterFence, "b", 2}}},
		{name: "lost acknowledged write",
			driver:  []DriverEvent{},
			audit:   []refstore.AuditRecord{write("a", A, 1, 100), write("a", A, 3, 300)},
			writers: []writer.Attempt{{Client: "a", Seq: 1, Local: A, SendNs: 99, TNs: 101, Outcome: "ok", Server: 100}, {Client: "a", Seq: 2, Local: A, SendNs: 199, TNs: 201, Outcome: "ok", Server: 200}, {Client: "a", Seq: 3, Local: A, SendNs: 299, TNs: 301, Outcome: "ok", Server: 300}, {Client: "a", Seq: 4, Local: A, SendNs: 399, TNs: 401, Outcome: "ok", Server: 400}},
			want:    []want{{KindLostAck, "a", 2}}},
		{name: "refusals: legitimate from the fence RPC's start to the unfence's ack, not outside",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 50)},
			writers: []writer.Attempt{
				{Client: "b", Seq: 2, Local: B, SendNs: 91, TNs: 92, Outcome: "refused", Reason: "fenced"},
				{Client: "b", Seq: 3, Local: B, SendNs: 150, TNs: 151, Outcome: "refused", Reason: "fenced"},
				{Client: "b", Seq: 4, Local: B, SendNs: 205, TNs: 208, Outcome: "refused", Reason: "fenced"},
				{Client: "b", Seq: 5, Local: B, SendNs: 300, TNs: 301, Outcome: "refused", Reason: "fenced"},
				{Client: "b", Seq: 6, SendNs: 60, TNs: 61, Outcome: "refused", Reason: "fenced"},
				{Client: "a", Seq: 1, Local: A, SendNs: 150, TNs: 151, Outcome: "refused", Reason: "fenced"},
			},
			want: []want{{KindRefusedUnfenced, "b", 6}, {KindRefusedUnfenced, "a", 1}, {KindRefusedUnfenced, "b", 5}}},
		{name: "safety comes first even when a lost write is earlier",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:   []refstore.AuditRecord{write("b", B, 2, 500)},
			writers: []writer.Attempt{{Client: "b", Seq: 1, Local: B, SendNs: 10, TNs: 11, Outcome: "ok", Server: 10}},
			want:    []want{{KindWriteAfterFence, "b", 2}, {KindLostAck, "b", 1}}},
		// An earlier test's deliberately early ack (ack-before-enforce)
		// failed the next case on kind when Ginkgo ran the fault first.
		{name: "regression: since-skips-an-earlier-tests-late-enforcement",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.5/32"), fenceEv(390, 400, "10.0.0.5/32")},
			enforce: []refstore.EnforceRecord{{TNs: 150, Generation: 1, CIDRs: []string{"10.0.0.5/32"}}, {TNs: 205, Generation: 2}, {TNs: 395, Generation: 3, CIDRs: []string{"10.0.0.5/32"}}},
			audit:   []refstore.AuditRecord{write("b", B, 1, 120), write("b", B, 2, 450)},
			since:   300,
			want:    []want{{KindWriteAfterFence, "b", 2}}},
		{name: "since keeps an earlier fence's window open for later writes",
			driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32")},
			audit:  []refstore.AuditRecord{write("b", B, 1, 150), write("b", B, 2, 450)},
			since:  300,
			want:   []want{{KindWriteAfterFence, "b", 2}}},
		{name: "without since, the earlier late enforcement is reported",
			driver:  []DriverEvent{fenceEv(90, 100, "10.0.0.5/32"), unfenceEv(200, 210, "10.0.0.5/32"), fenceEv(390, 400, "10.0.0.5/32")},
			enforce: []refstore.EnforceRecord{{TNs: 150, Generation: 1, CIDRs: []string{"10.0.0.5/32"}}, {TNs: 205, Generation: 2}, {TNs: 395, Generation: 3, CIDRs: []string{"10.0.0.5/32"}}},
			audit:   []refstore.AuditRecord{write("b", B, 1, 120), write("b", B, 2, 450)},
			want:    []want{{KindWriteAfterFence, "b", 1}, {KindWriteAfterFence, "b", 2}, {KindEnforcedLate, "", 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Check(Input{Audit: c.audit, Driver: c.driver, Writers: c.writers, Enforce: c.enforce}, Options{Skew: c.skew, Since: c.since})
			var got []want
			for _, v := range res.Violations {
				got = append(got, want{v.Kind, v.Client, v.Seq})
			}
			if len(got) != len(c.want) {
				t.Fatalf("violations %v, want %v\n%s", got, c.want, res.Markdown(c.name))
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("violations %v, want %v", got, c.want)
				}
			}
			if res.OK() != (len(c.want) == 0) {
				t.Fatalf("OK() = %v with %d violations", res.OK(), len(got))
			}
			if v := res.First(); v != nil && v.Kind == KindWriteAfterFence {
				if v.Window == nil || v.DeltaMs <= 0 || !strings.Contains(v.Record, `"seq":`) || !strings.Contains(v.String(), v.Record) {
					t.Fatalf("first violation lacks its record or window: %s", v)
				}
			}
		})
	}
}

func TestForgottenFenceIsListedAtTheRestart(t *testing.T) {
	res := Check(Input{Driver: []DriverEvent{fenceEv(90, 100, "10.0.0.5/32", "10.0.0.6/32"), readyEv(300, "10.0.0.6/32")}}, Options{})
	if len(res.Restarts) != 1 || strings.Join(res.Restarts[0].Missing, ",") != "10.0.0.5/32" ||
		strings.Join(res.Restarts[0].Restored, ",") != "10.0.0.6/32" {
		t.Fatalf("restarts %+v", res.Restarts)
	}
}

func TestFiguresAroundAFence(t *testing.T) {
	const B, A = "10.0.0.5:1", "10.0.1.7:1"
	ms := int64(time.Millisecond)
	in := Input{
		Driver: []DriverEvent{fenceEv(1000*ms, 1010*ms, "10.0.0.5/32"), unfenceEv(3000*ms, 3010*ms, "10.0.0.5/32")},
		Enforce: []refstore.EnforceRecord{{TNs: 1, Generation: 0, Restored: true},
			{TNs: 1005 * ms, Generation: 1, CIDRs: []string{"10.0.0.5/32"}}, {TNs: 3005 * ms, Generation: 2, CIDRs: []string{}}},
	}
	for i := int64(0); i < 40; i++ { // A writes every 100 ms for 4 s, B except while fenced
		tt := i * 100 * ms
		in.Audit = append(in.Audit, write("a", A, uint64(i+1), tt+1))
		if tt < 1000*ms || tt > 3010*ms {
			in.Audit = append(in.Audit, write("b", B, uint64(i+1), tt+2))
		}
	}
	res := Check(in, Options{})
	if !res.OK() || len(res.Episodes) != 1 {
		t.Fatalf("%s", res.Summary())
	}
	e := res.Episodes[0]
	if e.EnforceDeltaMs != -5 {
		t.Errorf("enforced − ack = %.3f ms, want -5", e.EnforceDeltaMs)
	}
	src := map[string]SourceFigures{}
	for _, s := range e.Sources {
		src[s.Source] = s
	}
	a, b := src["a@10.0.1.7"], src["b@10.0.0.5"]
	if a.Fenced || a.Before != 11 || a.During != 19 || a.After != 10 || a.GapS != 0 {
		t.Errorf("a: %+v", a)
	}
	// B's last write before the fence is at 900 ms, its first after the
	// unfence's ack (3010 ms) at 3100 ms.
	if !b.Fenced || b.During != 0 || b.Before != 10 || b.After != 9 || b.ResumeMs != 90+2e-6 || b.GapS != 2.2 {
		t.Errorf("b: %+v", b)
	}
	if !strings.Contains(res.Markdown("x"), "| b@10.0.0.5 | true | 10 | 0 | 9 |") || !strings.Contains(res.TimelineText(), "first write of b@10.0.0.5 after the unfence") {
		t.Errorf("report:\n%s\n%s", res.Markdown("x"), res.TimelineText())
	}
}

func TestFailedWhileUnfencedCountsOnlyInsideTheRun(t *testing.T) {
	const A = "10.0.1.7:1"
	in := Input{
		Audit: []refstore.AuditRecord{write("a", A, 2, 200), write("a", A, 4, 400)},
		Writers: []writer.Attempt{
			{Client: "a", Seq: 1, SendNs: 100, TNs: 101, Outcome: "error", Reason: "connect: refused"}, // before the service was up
			{Client: "a", Seq: 2, Local: A, SendNs: 199, TNs: 201, Outcome: "ok", Server: 200},
			{Client: "a", Seq: 3, Local: A, SendNs: 300, TNs: 301, Outcome: "error", Reason: "receive: EOF"}, // lost
			{Client: "a", Seq: 4, Local: A, SendNs: 399, TNs: 401, Outcome: "ok", Server: 400},
			{Client: "a", Seq: 5, SendNs: 500, TNs: 501, Outcome: "error", Reason: "connect: refused"}, // after the service stopped
		},
	}
	res := Check(in, Options{})
	if !res.OK() || len(res.Clients) != 1 {
		t.Fatal(res.Summary())
	}
	if c := res.Clients[0]; c.FailedUnfenced != 1 || c.Errors != 3 || c.OK != 2 || c.Lost != 0 {
		t.Fatalf("%+v, want 1 failure counted of 3 errors", c)
	}
}
