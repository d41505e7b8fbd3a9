package sanity_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// These tests run the real fenceproof binary, the way vendors and CI do: the
// suite in one process, the driver in-process or in another process, gRPC
// over a unix socket between them.

func TestMain(m *testing.M) {
	if spec := os.Getenv(fakeEnforcerEnv); spec != "" {
		os.Exit(fakeEnforcer(spec, os.Args))
	}
	// The self tests keep their temporary files (the reference driver's
	// store, the test drivers' state, the reports) in memory when they
	// can: a proof run waits on the store's fsync more than on anything it
	// checks. Each file is removed with its test, as under /tmp.
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && os.Getenv("TMPDIR") == "" {
		_ = os.Setenv("TMPDIR", "/dev/shm")
	}
	clitest.Main(m, "../cmd/fenceproof")
}

// run is one run of `fenceproof sanity` and its JSON report.
type run struct {
	clitest.Run
	result sanity.Result
}

// sanityRun runs `fenceproof sanity` with a reports dir of its own and a
// bound on its wall time, and reads the JSON report. Unless the test gives
// --hold, the sentinel is held 1 s instead of the default 15 s, so that the
// many runs of these tests stay short (sanityRunDefault keeps the default).
func sanityRun(t *testing.T, limit time.Duration, args ...string) run {
	t.Helper()
	if !slices.Contains(args, "--hold") {
		args = append(args, "--hold", "1s")
	}
	return sanityRunDefault(t, limit, args...)
}

// runsAtOnce is how many suite runs the self tests make at once: a run is
// a process that mostly waits (a hold, late-work windows), so more fit than
// the test binary's -parallel (the cores).
const runsAtOnce = 4

// eachAtOnce runs one subtest per case, up to runsAtOnce at once.
func eachAtOnce[C any](t *testing.T, cases []C, name func(C) string, run func(*testing.T, C)) {
	t.Helper()
	slots := make(chan struct{}, runsAtOnce)
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			t.Run(name(c), func(t *testing.T) { run(t, c) })
		}()
	}
	wg.Wait()
}

// sanityRunDefault is sanityRun with the suite's defaults untouched.
func sanityRunDefault(t *testing.T, limit time.Duration, args ...string) run {
	t.Helper()
	var r run
	r.Run = clitest.RunSuite(t, limit, "sanity", "sanity.json", &r.result, args...)
	return r
}

func (r run) verdict(t *testing.T, id string) sanity.Verdict {
	t.Helper()
	rr, ok := r.result.Rule(id)
	if !ok {
		t.Fatalf("rule %s is not in the report", id)
	}
	return rr.Verdict
}

// expectConforms checks a faithful run: exit 0, no FAIL or WARN, and every
// MUST rule passed or was skipped for a reason the test expects.
func expectConforms(t *testing.T, r run, skipsAllowed ...string) {
	t.Helper()
	if r.Exit != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.Exit, clitest.Tail(r.Out))
	}
	for _, rr := range r.result.Rules {
		switch {
		case rr.Verdict == sanity.VerdictPass || rr.Verdict == sanity.VerdictInfo || rr.Verdict == sanity.VerdictNotSup:
		case rr.Verdict == sanity.VerdictSkip && rr.OptIn != "" && rr.ID != "CIDR-010": // not asked for
		case rr.Verdict == sanity.VerdictSkip:
			allowed := false
			for _, id := range skipsAllowed {
				allowed = allowed || id == rr.ID
			}
			if !allowed {
				t.Errorf("%s skipped unexpectedly: %s", rr.ID, rr.Reason)
			}
		default:
			t.Errorf("%s %s: %s", rr.ID, rr.Verdict, rr.Reason)
		}
	}
	if n := r.result.Count(sanity.VerdictPass); n < 30 {
		t.Errorf("only %d rules passed; the suite has more than 30 MUST rules", n)
	}
}

func TestReferenceDriverConformsMemory(t *testing.T) {
	r := sanityRunDefault(t, 2*time.Minute, "--driver-backend", "memory")
	expectConforms(t, r, "IDENT-005", "CIDR-010")
	for _, f := range []string{"sanity.md", "sanity.html", "sanity-junit.xml"} {
		b, err := os.ReadFile(filepath.Join(r.Dir, f))
		if err != nil {
			t.Fatalf("report %s: %v", f, err)
		}
		for _, want := range []string{"CIDR-001", "ERR-004", "FENCE-007"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("report %s does not mention %s", f, want)
			}
		}
	}
}

func TestReferenceDriverConformsNftablesDestructive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the nftables backend runs in a private network namespace")
	}
	r := sanityRun(t, 3*time.Minute, "--driver-backend", "nftables", "--destructive")
	expectConforms(t, r, "IDENT-005")
}

// TestExternalDriverProcess runs the driver as its own process, the way a
// vendor's driver runs, and the suite against its socket.
func TestExternalDriverProcess(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "driver.sock")
	drv := startDriver(t, sock, "--secret", "userKey=s3cr3t-value", "--require-param", "clusterID=c1")
	r := sanityRun(t, 2*time.Minute, "--endpoint", "unix://"+sock, "--secret", "userKey=s3cr3t-value", "--param", "clusterID=c1", "--host-bits", "normalise")
	expectConforms(t, r, "IDENT-005", "CIDR-010")
	if strings.Contains(r.Out, "s3cr3t-value") {
		t.Errorf("the suite's output contains a secret value")
	}
	if logs := drv.String(); strings.Contains(logs, "s3cr3t-value") {
		t.Errorf("the driver's logs contain a secret value")
	}
}

// startDriver starts `fenceproof driver` on a unix socket and returns its
// combined output, stopping it when the test ends.
func startDriver(t *testing.T, sock string, args ...string) *bytes.Buffer {
	t.Helper()
	state := filepath.Join(t.TempDir(), "fences.db")
	cmd := exec.Command(clitest.Bin, append([]string{"driver", "--endpoint", "unix://" + sock, "--backend", "memory", "--state", state}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return &out
		}
		if time.Now().After(deadline) {
			t.Fatalf("driver did not create %s:\n%s", sock, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEveryFaultFailsItsRules runs the suite against every deliberately
// broken driver of the fault table's proofs and asserts the exact set of
// failing rules: a fault must fail its rules and nothing else (besides the
// randomized rules its proof says may also catch it on some seeds).
//
// Each proof runs with a seed of its own, fixed so that a failure replays
// (TestEveryClassFailsOnEverySeed runs the new classes with more).
func TestEveryFaultFailsItsRules(t *testing.T) {
	t.Parallel()
	randomized := map[string]bool{}
	for _, r := range sanity.Rules() {
		if slices.Contains(r.Labels, "randomized") {
			randomized[r.ID] = true
		}
	}
	type proof struct {
		fault.Proof
		seed int
	}
	var proofs []proof
	for i, p := range fault.Proofs() {
		proofs = append(proofs, proof{p, 1000 + i})
	}
	eachAtOnce(t, proofs, func(p proof) string { return p.Run() }, func(t *testing.T, p proof) {
		for _, id := range p.MayFail {
			if !randomized[id] {
				t.Errorf("MayFail names %s, which is not a randomized rule: a rule that checks by construction must fail on every seed", id)
			}
		}
		args := append([]string{"--driver-backend", "memory", "--driver-fault", p.Spec, "--seed", fmt.Sprint(p.seed)}, p.Flags...)
		r := sanityRun(t, 3*time.Minute, args...)
		if r.Exit != 1 {
			t.Fatalf("exit %d, want 1 (does not conform):\n%s", r.Exit, clitest.Tail(r.Out))
		}
		got := slices.DeleteFunc(r.result.Failed(), func(id string) bool { return slices.Contains(p.MayFail, id) })
		want := slices.Sorted(slices.Values(p.Fails))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("fault %s (seed %d): failing rules\n got  %v\n want %v", p.Run(), r.result.Seed, got, want)
			for _, rr := range r.result.Rules {
				if rr.Verdict == sanity.VerdictFail && !slices.Contains(want, rr.ID) {
					t.Logf("unexpected %s: %s", rr.ID, rr.Reason)
				}
			}
		}
	})
}

// TestEveryMustRuleHasAFault checks that every MUST rule of the suite is
// failed by at least one proof of the fault table (or is proven another way,
// named there), so that no MUST rule is a rule that cannot fail, and that
// every rule a proof names is a rule of the suite.
func TestEveryMustRuleHasAFault(t *testing.T) {
	proven := fault.ProvenBy()
	ids := map[string]bool{}
	for _, r := range sanity.Rules() {
		ids[r.ID] = true
		if r.Level != sanity.Must {
			continue
		}
		if _, ok := fault.ProvenOtherwise[r.ID]; ok {
			continue
		}
		if len(proven[r.ID]) == 0 {
			t.Errorf("MUST rule %s has no fault that fails it", r.ID)
		}
	}
	for id := range proven {
		if !ids[id] {
			t.Errorf("a fault proof names %s, which is not a rule of the suite", id)
		}
	}
	for id := range fault.ProvenOtherwise {
		if !ids[id] {
			t.Errorf("ProvenOtherwise names %s, which is not a rule of the suite", id)
		}
	}
}

// TestProfiles checks that a legitimate choice the spec leaves open is not
// failed, and that the profile is enforced when it is set.
func TestProfiles(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		exit    int
		rule    string
		verdict sanity.Verdict
		driver  []string // flags of an external driver; nil: the embedded one
	}{
		{"driver rejects host bits, profile reject", []string{"--driver-fault", "reject-host-bits", "--host-bits", "reject"}, 0, "CIDR-005", sanity.VerdictPass, nil},
		{"driver rejects host bits, profile either", []string{"--driver-fault", "reject-host-bits", "--host-bits", "either"}, 0, "CIDR-005", sanity.VerdictPass, nil},
		{"driver normalises, profile reject", []string{"--host-bits", "reject"}, 1, "CIDR-005", sanity.VerdictFail, []string{"--host-bits", "normalise"}},
		{"driver rejects, profile normalise", []string{"--host-bits", "normalise"}, 1, "CIDR-005", sanity.VerdictFail, []string{"--host-bits", "reject"}},
		{"no ListClusterFence, profile optional", []string{"--driver-fault", "list-unimplemented", "--list", "optional"}, 3, "FENCE-001", sanity.VerdictNotRun, nil},
		{"no ListClusterFence, profile optional", []string{"--driver-fault", "list-unimplemented", "--list", "optional"}, 3, "LIST-001", sanity.VerdictNotSup, nil},
		{"no IPv6, profile optional", []string{"--driver-fault", "reject-ipv6", "--ipv6", "optional"}, 0, "CIDR-007", sanity.VerdictNotSup, nil},
		{"lenient CIDRs meet the MUST", []string{"--driver-fault", "lenient-cidrs"}, 0, "CIDR-003", sanity.VerdictPass, nil},
		{"lenient CIDRs only warn on the SHOULD", []string{"--driver-fault", "lenient-cidrs"}, 0, "CIDR-004", sanity.VerdictWarn, nil},
		{"lenient CIDRs fail the SHOULD with --strict", []string{"--driver-fault", "lenient-cidrs", "--strict"}, 1, "CIDR-004", sanity.VerdictFail, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--driver-backend", "memory"}, c.args...)
			if c.driver != nil {
				sock := filepath.Join(t.TempDir(), "driver.sock")
				startDriver(t, sock, c.driver...)
				args = append([]string{"--endpoint", "unix://" + sock}, c.args...)
			}
			r := sanityRun(t, 2*time.Minute, args...)
			if r.Exit != c.exit {
				t.Fatalf("exit %d, want %d:\n%s", r.Exit, c.exit, clitest.Tail(r.Out))
			}
			if v := r.verdict(t, c.rule); v != c.verdict {
				t.Errorf("%s is %s, want %s", c.rule, v, c.verdict)
			}
		})
	}
}

func TestHungDriverFailsInTime(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "driver.sock")
	startDriver(t, sock, "--fault", "delay=Fence:10m", "--fault", "delay=List:10m")
	r := sanityRun(t, 2*time.Minute, "--endpoint", "unix://"+sock, "--rpc-timeout", "1s")
	if r.Exit != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.Exit, clitest.Tail(r.Out))
	}
	if v := r.verdict(t, "LIST-001"); v != sanity.VerdictFail {
		t.Errorf("a List that hangs before the first spec should fail LIST-001, got %s", v)
	}
	if v := r.verdict(t, "IDENT-001"); v != sanity.VerdictPass {
		t.Errorf("IDENT-001 is %s: a hung List must not fail the identity rules", v)
	}
	if v := r.verdict(t, "FENCE-001"); v != sanity.VerdictNotRun {
		t.Errorf("FENCE-001 is %s, want NOT RUN: it reads the fences, and List is what hangs", v)
	}
	// Fence missed its deadline twice before the first rule: the rules
	// that fence never sent their requests, and say why (TIME-001's).
	if rr, _ := r.result.Rule("FENCE-003"); rr.Verdict != sanity.VerdictNotRun || !strings.Contains(rr.Reason, "TIME-001") {
		t.Errorf("FENCE-003 is %s (%s), want NOT RUN naming TIME-001: its Fence was never sent", rr.Verdict, rr.Reason)
	}
	if v := r.verdict(t, "TIME-001"); v != sanity.VerdictFail {
		t.Errorf("TIME-001 is %s, want FAIL", v)
	}
}

// TestUnreachableEndpoint: nothing listens at the endpoint, or what does
// is no gRPC server. The verdict is UNREACHABLE with its own exit status
// and a message naming the endpoint, never DOES NOT CONFORM, and every
// report is written.
func TestUnreachableEndpoint(t *testing.T) {
	dir := t.TempDir()
	notGRPC := filepath.Join(dir, "http.sock")
	lis, err := net.Listen("unix", notGRPC)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() { _ = http.Serve(lis, http.NotFoundHandler()) }()
	for _, sock := range []string{filepath.Join(dir, "nobody.sock"), notGRPC} {
		r := sanityRun(t, time.Minute, "--endpoint", "unix://"+sock, "--connect-timeout", "1s")
		if r.Exit != 4 {
			t.Fatalf("%s: exit %d, want 4 (unreachable):\n%s", sock, r.Exit, clitest.Tail(r.Out))
		}
		if r.result.Verdict != "UNREACHABLE" || !strings.Contains(r.result.Unreachable, sock) {
			t.Errorf("%s: verdict %s, reason %q: want UNREACHABLE naming the endpoint", sock, r.result.Verdict, r.result.Unreachable)
		}
		if sock != notGRPC && !strings.Contains(r.result.Unreachable, "no such file or directory") {
			t.Errorf("%s: reason %q does not say why the socket cannot be reached", sock, r.result.Unreachable)
		}
		if !strings.Contains(r.Out, "verdict: UNREACHABLE") || !strings.Contains(r.Out, "unreachable: ") || strings.Contains(r.Out, "incomplete:") {
			t.Errorf("%s: stdout does not say UNREACHABLE, once:\n%s", sock, clitest.Tail(r.Out))
		}
		for _, f := range reportFiles {
			if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
				t.Errorf("%s: no %s", sock, f)
			}
		}
		if n := r.result.Count(sanity.VerdictPass) + r.result.Count(sanity.VerdictFail); n != 0 {
			t.Errorf("%s: %d rules passed or failed against an endpoint that does not answer", sock, n)
		}
	}
}

func TestLabelFilterSelectsRules(t *testing.T) {
	r := sanityRun(t, time.Minute, "--driver-backend", "memory", "--label-filter", "CIDR-001 || IDENT-001")
	if r.Exit != 3 || r.result.Verdict != "INCOMPLETE" {
		t.Fatalf("exit %d, verdict %s, want 3 INCOMPLETE: a filtered run does not vouch for conformance:\n%s", r.Exit, r.result.Verdict, clitest.Tail(r.Out))
	}
	for _, rr := range r.result.Rules {
		want := sanity.VerdictNotRun
		if rr.ID == "CIDR-001" || rr.ID == "IDENT-001" {
			want = sanity.VerdictPass
		}
		if rr.Verdict != want {
			t.Errorf("%s is %s, want %s", rr.ID, rr.Verdict, want)
		}
	}
}

func TestConfigErrorsExit2(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"unknown field", "endpoint: unix:///x.sock\nrpcTimeot: 3s\n", `unknown field "rpcTimeot"`},
		{"bad host bits", "profile:\n  hostBits: sometimes\n", "profile.hostBits"},
		{"bad duration", "rpcTimeout: soon\n", "soon"},
		{"bad endpoint", "endpoint: http://x\n", "field endpoint"},
		{"not yaml", "endpoint: [unclosed\n", "config"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			r := sanityRun(t, time.Minute, "--config", path)
			if r.Exit != 2 {
				t.Fatalf("exit %d, want 2:\n%s", r.Exit, r.Out)
			}
			if !strings.Contains(r.Out, path) || !strings.Contains(r.Out, c.want) {
				t.Errorf("error does not name the file and %q:\n%s", c.want, r.Out)
			}
		})
	}
}

func TestConfigFileIsUsed(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "driver.sock")
	startDriver(t, sock, "--secret", "k=v1", "--require-param", "clusterID=c1", "--host-bits", "reject")
	cfg := filepath.Join(t.TempDir(), "sanity.yaml")
	yaml := fmt.Sprintf("endpoint: unix://%s\nrpcTimeout: 5s\nsecrets:\n  k: v1\nparameters:\n  clusterID: c1\nprofile:\n  hostBits: reject\n  ipv6: required\n  listClusterFence: required\nseed: 42\n", sock)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := sanityRun(t, 2*time.Minute, "--config", cfg)
	expectConforms(t, r, "IDENT-005", "CIDR-010")
	if r.result.Seed != 42 {
		t.Errorf("seed %d, want 42 from the config file", r.result.Seed)
	}
}

// BenchmarkSuite measures the wall time of one whole run of the suite, as a
// user runs it, against the reference driver.
func BenchmarkSuite(b *testing.B) {
	backends := []string{"memory"}
	if os.Geteuid() == 0 {
		backends = append(backends, "nftables")
	}
	for _, be := range backends {
		b.Run(be, func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				out, err := exec.Command(clitest.Bin, "sanity", "--reports", dir, "--no-color", "--driver-backend", be).CombinedOutput()
				if err != nil {
					b.Fatalf("%v:\n%s", err, clitest.Tail(string(out)))
				}
			}
		})
	}
}

// TestIndependentNaiveDriver runs the suite against a driver that shares no
// code with the reference driver (testdata/naivedriver). It applies CIDRs
// one by one, stores them as spelled and has no authentication: exactly the
// rules it breaks fail, and the rules it meets pass.
func TestIndependentNaiveDriver(t *testing.T) {
	bin := testDriver(t, "naivedriver")
	sock := filepath.Join(t.TempDir(), "naive.sock")
	cmd := exec.Command(bin, "--socket", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the naive driver did not start")
		}
	}
	r := sanityRun(t, 2*time.Minute, "--endpoint", "unix://"+sock)
	if r.Exit != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.Exit, clitest.Tail(r.Out))
	}
	want := map[string]sanity.Verdict{
		"CIDR-002":  sanity.VerdictFail,   // applied the valid blocks before finding the bad one
		"CIDR-005":  sanity.VerdictFail,   // 192.0.2.77/24 accepted and listed with its host bits
		"CIDR-007":  sanity.VerdictFail,   // compressed, expanded and upper-case IPv6 are three fences
		"IDENT-005": sanity.VerdictPass,   // GetFenceClients not advertised and UNIMPLEMENTED
		"ERR-004":   sanity.VerdictNotSup, // no secrets configured: taken to authenticate nothing
		"CIDR-001":  sanity.VerdictFail,   // net.ParseCIDR accepts zero-padded prefix lengths (/032), stored verbatim
		"CIDR-003":  sanity.VerdictPass,
		"FENCE-001": sanity.VerdictPass,
		"FENCE-007": sanity.VerdictPass,
		"CONC-002":  sanity.VerdictPass,
		"SUITE-001": sanity.VerdictPass, // cleanup unfences every spelling it fenced
	}
	for id, v := range want {
		if got := r.verdict(t, id); got != v {
			rr, _ := r.result.Rule(id)
			t.Errorf("%s is %s, want %s (%s)", id, got, v, rr.Reason)
		}
	}
}

func TestListRulesNeedsNoDriver(t *testing.T) {
	out, err := exec.Command(clitest.Bin, "sanity", "--list-rules", "--endpoint", "unix:///nonexistent.sock").CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, id := range []string{"IDENT-001", "ERR-006", "CIDR-010", "FENCE-007", "CLIENT-003", "CONC-003", "TIME-001", "SUITE-002"} {
		if !bytes.Contains(out, []byte(id)) {
			t.Errorf("--list-rules does not list %s", id)
		}
	}
}

func TestFocusAndSkipSelectRules(t *testing.T) {
	r := sanityRun(t, time.Minute, "--driver-backend", "memory", "--focus", `\[CIDR-00[25]\]`, "--skip", "IPv6 a /64")
	if r.Exit != 3 {
		t.Fatalf("exit %d, want 3 (INCOMPLETE):\n%s", r.Exit, clitest.Tail(r.Out))
	}
	for _, rr := range r.result.Rules {
		want := sanity.VerdictNotRun
		if rr.ID == "CIDR-002" || rr.ID == "CIDR-005" {
			want = sanity.VerdictPass
		}
		if rr.Verdict != want {
			t.Errorf("%s is %s, want %s", rr.ID, rr.Verdict, want)
		}
	}
	c, _ := r.result.Rule("CIDR-005")
	for _, cs := range c.Cases {
		if strings.Contains(cs.Name, "IPv6") && cs.Verdict != sanity.VerdictNotRun {
			t.Errorf("case %q ran although --skip named it", cs.Name)
		}
	}
	if !strings.Contains(strings.Join(r.result.IncompleteBecause, " "), "CIDR-005") {
		t.Errorf("the skipped case of CIDR-005 does not make the run incomplete: %v", r.result.IncompleteBecause)
	}
}

// TestREADMERuleTable checks that the README's rule table is the one
// generated from the rule table and the fault table's proofs, so it never
// drifts.
// Regenerate it with: fenceproof sanity --rules-table
func TestREADMERuleTable(t *testing.T) {
	out, err := exec.Command(clitest.Bin, "sanity", "--rules-table").CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- rules-table:begin -->\n", "<!-- rules-table:end -->"
	_, rest, ok := strings.Cut(string(readme), begin)
	table, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("README.md has no %q ... %q block", begin, end)
	}
	if table != string(out) {
		t.Errorf("README.md's rule table is stale; regenerate it with fenceproof sanity --rules-table.\nwant:\n%s", out)
	}
}
