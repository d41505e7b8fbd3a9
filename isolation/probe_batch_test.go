package isolation

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// batchFake is fake with batches: one call per batch, which fails as a
// whole when any of its probes fails (an exec that could not run).
type batchFake struct {
	*fakeProber
	batches atomic.Int64
}

func (b *batchFake) ProbeBatch(ctx context.Context, from ProbeEndpoint, reqs []ProbeRequest) ([]ProbeResult, error) {
	b.batches.Add(1)
	out := make([]ProbeResult, len(reqs))
	for i, r := range reqs {
		if r.From.Name != from.Name {
			return nil, errors.New("a batch mixes sources")
		}
		res, err := b.Probe(ctx, r)
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

func TestBatchRunMatchesWithOneExecPerSource(t *testing.T) {
	ps := peers(9)
	f := &batchFake{fakeProber: &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) { return truth(r), nil }, delay: time.Millisecond}}
	obs, st := Runner{Prober: f, Parallel: 4}.Run(context.Background(), ps, cases, expectedAll(ps))
	if ms, err := Diff(expectedAll(ps), obs); err != nil || len(ms) != 0 {
		t.Fatalf("diff %v %v", ms, err)
	}
	if st.Probes != 9*9*2 || st.Retries != 0 || st.Execs != 9 || f.batches.Load() != 9 {
		t.Errorf("stats %+v, %d batches: want 162 probes in 9 execs (one per source), no retry", st, f.batches.Load())
	}
}

func TestBatchRunRetriesOnlyTheDisagreeingCells(t *testing.T) {
	ps := peers(3)
	f := &batchFake{fakeProber: &fakeProber{answer: transientAndPersistent}}
	exp := expectedAll(ps)
	obs, st := Runner{Prober: f, Parallel: 2}.Run(context.Background(), ps, cases, exp)
	ms, _ := Diff(exp, obs)
	if len(ms) != 1 || ms[0].From != "ns/p2" || ms[0].To != "ns/p1" {
		t.Fatalf("mismatches %v, want only ns/p2 -> ns/p1 tcp/80", ms)
	}
	if st.Retries != 2 || st.Probes != 20 || st.Execs != 3+2 {
		t.Errorf("stats %+v, want 2 retried cells, 20 probes, 5 execs (3 rows, 2 retry batches)", st)
	}
	if f.attempts["ns/p1>ns/p0 tcp/80"] != 1 {
		t.Errorf("an agreeing cell was probed %d times, want 1", f.attempts["ns/p1>ns/p0 tcp/80"])
	}
}

func TestBatchRunAFailedExecMakesItsRowUnknown(t *testing.T) {
	ps := peers(2)
	f := &batchFake{fakeProber: &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) {
		if r.From.Pod == "p1" {
			return false, errors.New("exec: pod gone")
		}
		return truth(r), nil
	}}}
	obs, st := Runner{Prober: f, Parallel: 2}.Run(context.Background(), ps, cases, nil)
	if n := obs.Count(Unknown); n != 4 {
		t.Errorf("%d unknown cells, want p1's 4", n)
	}
	if v, _ := obs.Get(cases[1], "ns/p0", "ns/p1"); v != Allowed {
		t.Errorf("p0's row is %v, want allowed", v)
	}
	if st.Errors != 8 || st.Retries != 4 || !strings.Contains(st.LastError, "ns/p1 (a batch of 4 probes)") {
		t.Errorf("stats %+v: want 8 errors (row and its retry), 4 retries, the last error naming the row", st)
	}
}

func TestBatchRunSettles(t *testing.T) {
	ps := peers(3)
	var converged atomic.Bool
	f := &batchFake{fakeProber: &fakeProber{answer: func(r ProbeRequest, _ int) (bool, error) { return !converged.Load() || truth(r), nil }}}
	time.AfterFunc(50*time.Millisecond, func() { converged.Store(true) })
	exp := expectedAll(ps)
	obs, st := Runner{Prober: f, Parallel: 4, Settle: 2 * time.Second, Interval: 20 * time.Millisecond}.Run(context.Background(), ps, cases, exp)
	if ms, _ := Diff(exp, obs); len(ms) != 0 {
		t.Fatalf("did not converge: %v (stats %+v)", ms, st)
	}
}

func TestBatchArgsAndParse(t *testing.T) {
	reqs := []ProbeRequest{
		{To: ProbeEndpoint{IP: netip.MustParseAddr("10.244.0.7")}, Case: cases[0]},
		{To: ProbeEndpoint{IP: netip.MustParseAddr("fd00::7")}, Case: cases[1]},
	}
	got := strings.Join(batchArgs("/probe", time.Second, reqs), " ")
	if want := "/probe connect-all --timeout 1s --parallel 2 tcp:10.244.0.7:80 udp:[fd00::7]:80"; got != want {
		t.Errorf("args %s, want %s", got, want)
	}
	out := `{"to":"10.244.0.7:80","proto":"tcp","ok":true,"reply":"ok a"}` + "\n" + `{"to":"[fd00::7]:80","proto":"udp","ok":false,"error":"timeout"}` + "\n"
	res, err := parseBatch([]byte(out), reqs)
	if err != nil || len(res) != 2 || !res[0].Reachable || res[1].Reachable || res[1].Error != "timeout" {
		t.Fatalf("parseBatch = %+v, %v", res, err)
	}
	for _, bad := range []string{
		`{"to":"10.244.0.7:80","proto":"tcp","ok":true}`,                                                          // one line for two targets
		`{"to":"[fd00::7]:80","proto":"udp","ok":true}` + "\n" + `{"to":"10.244.0.7:80","proto":"tcp","ok":true}`, // out of order
		"OCI runtime exec failed",
	} {
		if _, err := parseBatch([]byte(bad), reqs); err == nil {
			t.Errorf("parseBatch(%q): want an error", bad)
		}
	}
}

func TestDockerProberBatch(t *testing.T) {
	out := `{"to":"10.244.1.7:80","proto":"tcp","ok":false,"error":"i/o timeout"}`
	bin, argsFile := fakeDocker(t, out, 1)
	p := &DockerProber{Command: "/usr/local/bin/probe", Timeout: time.Second, Docker: bin}
	res, err := ByRunner{Container: p}.ProbeBatch(context.Background(), extReq.From, []ProbeRequest{extReq})
	if err != nil || len(res) != 1 || res[0].Reachable {
		t.Fatalf("result %+v, err %v: want one unreachable cell (exit 1 with a line is a verdict)", res, err)
	}
	args, _ := readArgs(argsFile)
	if want := "exec fp-ext /usr/local/bin/probe connect-all --timeout 1s --parallel 1 tcp:10.244.1.7:80"; args != want {
		t.Errorf("docker %s; want docker %s", args, want)
	}
}
