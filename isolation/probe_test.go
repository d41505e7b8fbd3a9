package isolation

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// fake answers from a function of the request and the attempt number of
// that cell, counting concurrency.
type fakeProber struct {
	mu       sync.Mutex
	attempts map[string]int
	answer   func(req ProbeRequest, attempt int) (bool, error)
	inflight atomic.Int64
	peak     atomic.Int64
	delay    time.Duration
}

func (f *fakeProber) Probe(ctx context.Context, req ProbeRequest) (ProbeResult, error) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(f.delay)
	key := req.From.Name + ">" + req.To.Name + " " + req.Case.String()
	f.mu.Lock()
	if f.attempts == nil {
		f.attempts = map[string]int{}
	}
	f.attempts[key]++
	a := f.attempts[key]
	f.mu.Unlock()
	ok, err := f.answer(req, a)
	return ProbeResult{Reachable: ok}, err
}

var cases = []PortProto{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 80, Protocol: corev1.ProtocolUDP}}

func peers(n int) []ProbeEndpoint {
	var out []ProbeEndpoint
	for i := range n {
		out = append(out, ProbeEndpoint{Name: fmt.Sprintf("ns/p%d", i), Namespace: "ns", Pod: fmt.Sprintf("p%d", i), IP: netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", i+1))})
	}
	return out
}

// expectedAll returns a matrix where only TCP from p0 is blocked.
func expectedAll(ps []ProbeEndpoint) *Matrix {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	m := NewMatrix(names, cases)
	for c := range cases {
		for i := range ps {
			for j := range ps {
				m.SetAt(c, i, j, VerdictOf(!(c == 0 && i == 0)))
			}
		}
	}
	return m
}

func truth(req ProbeRequest) bool {
	return !(req.Case.Protocol == corev1.ProtocolTCP && req.From.Pod == "p0")
}

// transientAndPersistent answers truthfully except p1->p2 tcp, wrong on
// its first attempt only (a transient), and p2->p1 tcp, wrong on every
// attempt (a real mismatch).
func transientAndPersistent(r ProbeRequest, a int) (bool, error) {
	if r.Case.Protocol == corev1.ProtocolTCP && r.From.Pod == "p1" && r.To.Pod == "p2" && a == 1 {
		return false, nil
	}
	if r.Case.Protocol == corev1.ProtocolTCP && r.From.Pod == "p2" && r.To.Pod == "p1" {
		return false, nil
	}
	return truth(r), nil
}

func TestRunMatchesAndRunsInParallel(t *testing.T) {
	ps := peers(9)
	f := &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) { return truth(r), nil }, delay: 5 * time.Millisecond}
	obs, st := Runner{Prober: f, Parallel: 16}.Run(context.Background(), ps, cases, expectedAll(ps))
	ms, err := Diff(expectedAll(ps), obs)
	if err != nil || len(ms) != 0 {
		t.Fatalf("diff %v %v", ms, err)
	}
	if st.Probes != 9*9*2 || st.Retries != 0 || st.Rounds != 1 {
		t.Errorf("stats %+v, want 162 probes, no retry, one round", st)
	}
	if f.peak.Load() < 2 || f.peak.Load() > 16 {
		t.Errorf("peak concurrency %d, want 2..16", f.peak.Load())
	}
}

func TestRunRetriesAMismatchOnceAndTheSecondResultCounts(t *testing.T) {
	ps := peers(3)
	f := &fakeProber{answer: transientAndPersistent}
	exp := expectedAll(ps)
	obs, st := Runner{Prober: f, Parallel: 4}.Run(context.Background(), ps, cases, exp)
	ms, _ := Diff(exp, obs)
	if len(ms) != 1 || ms[0].From != "ns/p2" || ms[0].To != "ns/p1" || ms[0].Observed != Blocked {
		t.Fatalf("mismatches %v, want only ns/p2 -> ns/p1 tcp/80", ms)
	}
	if st.Retries != 2 || st.Probes != 18+2 {
		t.Errorf("stats %+v, want 2 retries, 20 probes", st)
	}
	if f.attempts["ns/p2>ns/p1 tcp/80"] != 2 {
		t.Errorf("the persistent mismatch was probed %d times, want 2", f.attempts["ns/p2>ns/p1 tcp/80"])
	}
}

func TestRunErrorsAreUnknownAfterRetry(t *testing.T) {
	ps := peers(2)
	f := &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) {
		if r.From.Pod == "p1" && r.To.Pod == "p0" && r.Case.Protocol == corev1.ProtocolUDP {
			return false, errors.New("exec: pod gone")
		}
		return truth(r), nil
	}}
	obs, st := Runner{Prober: f, Parallel: 2}.Run(context.Background(), ps, cases, nil)
	if v, _ := obs.Get(cases[1], "ns/p1", "ns/p0"); v != Unknown {
		t.Errorf("failed probe recorded as %v", v)
	}
	if st.Errors != 2 || st.Retries != 1 || st.LastError == "" {
		t.Errorf("stats %+v, want 2 errors, 1 retry and the last error", st)
	}
	if obs.Count(Unknown) != 1 {
		t.Errorf("%d unknown cells, want 1", obs.Count(Unknown))
	}
}

func TestRunSettlesOnAConvergingNetwork(t *testing.T) {
	ps := peers(3)
	var converged atomic.Bool
	f := &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) {
		if !converged.Load() {
			return true, nil
		}
		return truth(r), nil
	}}
	time.AfterFunc(50*time.Millisecond, func() { converged.Store(true) })
	exp := expectedAll(ps)
	obs, st := Runner{Prober: f, Parallel: 4, Settle: 2 * time.Second, Interval: 20 * time.Millisecond}.Run(context.Background(), ps, cases, exp)
	if ms, _ := Diff(exp, obs); len(ms) != 0 {
		t.Fatalf("did not converge: %v", ms)
	}
	if st.Rounds < 2 {
		t.Errorf("stats %+v: expected settle rounds", st)
	}
	if d := st.Disagreeing; len(d) != st.Rounds || d[0] == 0 || d[len(d)-1] != 0 {
		t.Errorf("disagreeing cells per pass %v (%d rounds): want one count per pass, from some to none", d, st.Rounds)
	}
}

func TestRunSettleGivesUpOnAPersistentMismatch(t *testing.T) {
	ps := peers(2)
	f := &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) { return true, nil }}
	exp := expectedAll(ps)
	start := time.Now()
	obs, st := Runner{Prober: f, Parallel: 2, Settle: 200 * time.Millisecond, Interval: 20 * time.Millisecond}.Run(context.Background(), ps, cases, exp)
	if ms, _ := Diff(exp, obs); len(ms) != 2 {
		t.Fatalf("mismatches %v, want the two p0 tcp cells", ms)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("settle ran %v, far past its 200ms budget", d)
	}
	if st.Rounds < 2 {
		t.Errorf("stats %+v: expected settle rounds", st)
	}
	for _, n := range st.Disagreeing {
		if n != 2 || len(st.Disagreeing) != st.Rounds {
			t.Fatalf("disagreeing cells per pass %v (%d rounds): want 2 after every pass", st.Disagreeing, st.Rounds)
		}
	}
}

func TestParseConnect(t *testing.T) {
	tests := []struct {
		out   string
		want  ProbeResult
		isErr bool
	}{
		{`{"to":"10.0.0.1:80","proto":"tcp","ok":true,"error":"","reply":"ok m0","ms":3}`, ProbeResult{Reachable: true, Reply: "ok m0"}, false},
		{"noise\n" + `{"to":"10.0.0.1:80","proto":"udp","ok":false,"error":"i/o timeout","reply":"","ms":1000}` + "\n", ProbeResult{Error: "i/o timeout"}, false},
		{``, ProbeResult{}, true},
		{`usage: probe`, ProbeResult{}, true},
		{`{"to":"x"}`, ProbeResult{}, true},
	}
	for _, tc := range tests {
		got, err := ParseConnect([]byte(tc.out))
		if (err != nil) != tc.isErr || got != tc.want {
			t.Errorf("ParseConnect(%q) = %+v, %v; want %+v err=%v", tc.out, got, err, tc.want, tc.isErr)
		}
	}
}

func TestExecArgs(t *testing.T) {
	p := &ExecProber{Command: "/probe", Timeout: time.Second}
	got := fmt.Sprint(p.Args(ProbeRequest{To: ProbeEndpoint{IP: netip.MustParseAddr("10.244.0.7")}, Case: cases[1]}))
	if want := "[/probe connect --proto udp --to 10.244.0.7:80 --timeout 1s]"; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
}
