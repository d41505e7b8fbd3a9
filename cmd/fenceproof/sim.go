package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fenceproof/fenceproof/sim"
)

func init() {
	register("sim", "fencing simulator: run a scenario, explore random faults, compare policies", simMain)
}

var simUsage = `usage:
  fenceproof sim run SCENARIO.yaml [--policy P] [--seed N] [--safety] [--reports DIR] [--quiet]
  fenceproof sim explore [--policy P] [--runs N] [--seed S] [--safety] [--reports DIR] [--quiet]
  fenceproof sim explore --shard I/N --json FILE [--policy P] [--runs N] [--seed S] [--safety]
  fenceproof sim merge [--reports DIR] [--quiet] SHARD.json...
  fenceproof sim compare [--scenarios DIR] [--random N] [--seed S] [--reports DIR] [--quiet]
  fenceproof sim calibrate [--data DIR] [--only A,B] [--reports DIR] [--fencing TIMELINE] [--quiet]
  fenceproof-ceph sim calibrate --run [--save DIR] ...   (root: the experiments on a real Ceph first)

policies: ` + strings.Join(sim.PolicyNames(), ", ") + `
exit codes: 0 as expected, 1 a violation the scenario does not expect (or an
expected one that did not happen), 2 bad input; --help exits 0`

// simFlags parses a subcommand's flags. It returns the exit code to use
// and false when the command must stop (--help: 0, a bad flag: 2).
func simFlags(fs *flag.FlagSet, args []string, parse func([]string) error) (int, bool) {
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "%s\n\nflags of fenceproof %s:\n", simUsage, fs.Name())
		fs.PrintDefaults()
	}
	if err := parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		fmt.Fprintf(os.Stderr, "fenceproof %s: %v\n", fs.Name(), err)
		return 2, false
	}
	return 0, true
}

// badArg reports a bad flag value and returns exit status 2.
func badArg(cmd, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "fenceproof %s: %s\n", cmd, fmt.Sprintf(format, a...))
	return 2
}

// noPositional rejects positional arguments for commands that take none.
func noPositional(fs *flag.FlagSet) func([]string) error {
	return func(args []string) error {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		return nil
	}
}

func simMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "fenceproof sim: missing subcommand\n%s\n", simUsage)
		return 2
	}
	switch args[0] {
	case "run":
		return simRun(args[1:])
	case "explore":
		return simExplore(args[1:])
	case "compare":
		return simCompare(args[1:])
	case "merge":
		return simMerge(args[1:])
	case "calibrate":
		return simCalibrate(args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Println(simUsage)
		return 0
	}
	fmt.Fprintf(os.Stderr, "fenceproof sim: unknown subcommand %q\n\n%s\n", args[0], simUsage)
	return 2
}

// parseWithPositional parses flags that may come before or after one
// positional argument.
func parseWithPositional(fs *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return "", fmt.Errorf("want exactly one scenario file, got %d", len(pos))
	}
	return pos[0], nil
}

func writeReport(dir, name, content string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, []byte(content), 0o644)
}

func simRun(args []string) int {
	fs := flag.NewFlagSet("sim run", flag.ContinueOnError)
	policy := fs.String("policy", "safe", "policy: "+strings.Join(sim.PolicyNames(), ", "))
	seedArg := fs.String("seed", "", "RNG seed, a non-negative integer (default: the scenario's seed)")
	reports := fs.String("reports", "reports", "directory for the timeline, SVG and HTML")
	quiet := fs.Bool("quiet", false, "print only the verdict line and violations, not the timeline or the minimized trace")
	safety := fs.Bool("safety", false, "check only the safety invariants (all but 6, liveness)")
	var path string
	if code, ok := simFlags(fs, args, func(a []string) (err error) { path, err = parseWithPositional(fs, a); return err }); !ok {
		return code
	}
	seed := int64(-1)
	if *seedArg != "" {
		n, err := strconv.ParseUint(*seedArg, 10, 63)
		if err != nil {
			return badArg("sim run", "--seed %q: want a non-negative integer", *seedArg)
		}
		seed = int64(n)
	}
	pol, err := sim.LookupPolicy(*policy)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
		return 2
	}
	sc, err := sim.LoadScenario(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
		return 2
	}
	sd := sc.Seed
	if seed >= 0 {
		sd = uint64(seed)
	}
	cfg := sc.Config(pol, sd)
	cfg.Record, cfg.SafetyOnly = true, *safety
	r, err := sim.RunConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim run: %s: %v\n", path, err)
		return 2
	}
	out := io.Writer(os.Stdout)
	if *quiet {
		for _, l := range strings.SplitAfter(r.Summary(), "\n") {
			if strings.HasPrefix(l, "# verdict") || strings.HasPrefix(l, "# violation") {
				fmt.Fprint(out, l)
			}
		}
	} else {
		fmt.Fprint(out, r.Text())
	}
	// one folder per scenario: reports/sim/<scenario>/<policy>-<seed>.*
	runDir := filepath.Join(*reports, "sim", sc.Name)
	base := fmt.Sprintf("%s-%d", pol.Name, sd)
	for ext, content := range map[string]string{".txt": r.Text(), ".svg": r.SVG(), ".html": r.HTML()} {
		if _, err := writeReport(runDir, base+ext, content); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
			return 2
		}
	}
	if !*quiet {
		fmt.Fprintf(out, "# reports: %s/%s.{txt,svg,html}\n", runDir, base)
	}
	if len(r.Violations) > 0 && !*quiet {
		inv := r.Violations[0].Inv
		cfg.Record = false
		min, faults, err := sim.MinimizeResult(cfg, sc, inv)
		if err == nil {
			fmt.Fprintf(out, "\n# VIOLATION of inv%d with policy %s, seed %d. Minimized fault schedule (%d of %d faults):\n", inv, pol.Name, sd, len(faults), len(sc.Faults))
			for _, f := range faults {
				fmt.Fprintf(out, "#   - %s\n", sc.FaultString(f))
			}
			fmt.Fprintf(out, "# shortest trace:\n%s", min.Text())
			if _, err := writeReport(runDir, base+"-minimal.txt", min.Text()); err != nil {
				fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
			}
		}
	}
	got := r.Verdict()
	want, ok := sc.Expect[pol.Name]
	switch {
	case ok && want == got:
		if !*quiet {
			fmt.Fprintf(out, "# as expected by %s: %s\n", filepath.Base(path), got)
		}
		return 0
	case ok:
		fmt.Fprintf(out, "# UNEXPECTED: %s expects %s for policy %s, got %s (seed %d)\n", filepath.Base(path), want, pol.Name, got, sd)
		return 1
	case got != "pass":
		fmt.Fprintf(out, "# UNEXPECTED: violation %s (seed %d, policy %s); the scenario sets no expectation\n", got, sd, pol.Name)
		return 1
	}
	return 0
}

func simExplore(args []string) int {
	fs := flag.NewFlagSet("sim explore", flag.ContinueOnError)
	policy := fs.String("policy", "safe", "policy: "+strings.Join(sim.PolicyNames(), ", "))
	runs := fs.Int("runs", 100, "number of random fault schedules (>= 1)")
	seed := fs.Uint64("seed", 1, "first seed; run i uses seed+i")
	reports := fs.String("reports", "reports", "directory for minimized scenarios and traces")
	quiet := fs.Bool("quiet", false, "print only the final count and one line per finding")
	shardArg := fs.String("shard", "", "run only shard i/n of the runs (run j belongs to shard j mod n); needs --json")
	jsonOut := fs.String("json", "", "with --shard: write the shard's findings to this file (- for stdout) for sim merge")
	safety := fs.Bool("safety", false, "check only the safety invariants (all but 6, liveness): findings are safety violations")
	if code, ok := simFlags(fs, args, noPositional(fs)); !ok {
		return code
	}
	if *runs < 1 {
		return badArg("sim explore", "--runs %d: want at least 1", *runs)
	}
	var sh sim.Shard
	if *shardArg != "" {
		var err error
		if sh, err = sim.ParseShard(*shardArg); err != nil {
			return badArg("sim explore", "--shard: %v", err)
		}
		if *jsonOut == "" {
			return badArg("sim explore", "--shard needs --json FILE")
		}
	} else if *jsonOut != "" {
		return badArg("sim explore", "--json needs --shard i/n")
	}
	pol, err := sim.LookupPolicy(*policy)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
		return 2
	}
	if !*quiet {
		fmt.Fprintf(os.Stderr, "explore: policy %s, %d runs, seeds %d..%d\n", pol.Name, *runs, *seed, *seed+uint64(*runs)-1)
	}
	step := max(*runs/20, 1)
	findings, err := sim.ExploreShard(pol, *runs, *seed, sh, *safety, func(done, viol int) {
		if !*quiet && (done%step == 0 || done == *runs) {
			fmt.Fprintf(os.Stderr, "explore: %d/%d runs, %d with violations\n", done, *runs, viol)
		}
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
		return 2
	}
	rep := sim.Report(findings)
	if sh.Of > 0 {
		b, err := sim.MarshalShard(&sim.ShardReport{Policy: pol.Name, Safety: *safety, Seed: *seed, Runs: *runs, Shard: sh.Index, Shards: sh.Of, Findings: rep})
		if err == nil && *jsonOut == "-" {
			_, err = fmt.Printf("%s\n", b)
			if err == nil {
				return 0
			}
		} else if err == nil {
			_, err = writeReport(filepath.Dir(*jsonOut), filepath.Base(*jsonOut), string(b))
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
			return 2
		}
		fmt.Printf("explore: shard %d/%d of policy %s: %d findings in its %d runs; written to %s (join the shards with fenceproof sim merge)\n",
			sh.Index, sh.Of, pol.Name, len(rep), shardRuns(*runs, sh), *jsonOut)
		return 0
	}
	return printFindings(pol.Name, *safety, *runs, rep, *reports, *quiet)
}

func shardRuns(runs int, sh sim.Shard) int {
	n := 0
	for j := 0; j < runs; j++ {
		if j%sh.Of == sh.Index {
			n++
		}
	}
	return n
}

// printFindings prints an exploration's findings and writes their
// minimized scenarios; sim explore and sim merge share it, so a merged
// sharded exploration prints what one process prints.
func printFindings(policy string, safety bool, runs int, findings []sim.FindingReport, reports string, quiet bool) int {
	flag, what := "", "an invariant"
	if safety {
		flag, what = " --safety", "a safety invariant"
	}
	for _, f := range findings {
		if quiet {
			fmt.Printf("seed %d: %s\n", f.Seed, f.Verdict)
		} else {
			fmt.Printf("\n== seed %d, policy %s: %s\n", f.Seed, policy, f.Verdict)
			for _, v := range f.Violations {
				fmt.Printf("   %s\n", v)
			}
		}
		p, err := writeReport(filepath.Join(reports, "sim-explore-"+policy), fmt.Sprintf("seed-%d.yaml", f.Seed), f.Scenario)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim: %v\n", err)
			return 2
		}
		if quiet {
			continue
		}
		fmt.Printf("   replay: fenceproof sim explore --policy %s%s --runs 1 --seed %d\n", policy, flag, f.Seed)
		fmt.Printf("   minimized scenario (%d faults): %s (fenceproof sim run %s --policy %s%s)\n", f.Faults, p, p, policy, flag)
		fmt.Print(indent(f.Trace, "   | "))
	}
	fmt.Printf("\nexplore: policy %s: %d of %d random schedules broke %s\n", policy, len(findings), runs, what)
	if len(findings) > 0 {
		return 1
	}
	return 0
}

func simMerge(args []string) int {
	fs := flag.NewFlagSet("sim merge", flag.ContinueOnError)
	reports := fs.String("reports", "reports", "directory for minimized scenarios")
	quiet := fs.Bool("quiet", false, "print only the final count and one line per finding")
	if code, ok := simFlags(fs, args, fs.Parse); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return badArg("sim merge", "want the shard reports (sim explore --shard i/n --json FILE) as arguments")
	}
	files := map[string][]byte{}
	for _, name := range fs.Args() {
		b, err := os.ReadFile(name)
		if err != nil {
			return badArg("sim merge", "%v", err)
		}
		files[name] = b
	}
	m, err := sim.Merge(files)
	if err != nil {
		return badArg("sim merge", "%v", err)
	}
	if !*quiet {
		fmt.Fprintf(os.Stderr, "merge: %d shards of policy %s, %d runs, seeds %d..%d\n", m.Shards, m.Policy, m.Runs, m.Seed, m.Seed+uint64(m.Runs)-1)
	}
	return printFindings(m.Policy, m.Safety, m.Runs, m.Findings, *reports, *quiet)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

func simCompare(args []string) int {
	fs := flag.NewFlagSet("sim compare", flag.ContinueOnError)
	dir := fs.String("scenarios", "fixtures/scenarios", "directory of scenario files")
	random := fs.Int("random", 40, "random fault schedules per policy (>= 0)")
	seed := fs.Uint64("seed", 1, "first seed of the random schedules")
	reports := fs.String("reports", "reports", "directory for sim-compare.{md,txt,svg,html,json}")
	quiet := fs.Bool("quiet", false, "no progress; print only the policy table and unexpected verdicts")
	if code, ok := simFlags(fs, args, noPositional(fs)); !ok {
		return code
	}
	if *random < 0 {
		return badArg("sim compare", "--random %d: want 0 or more", *random)
	}
	scs, err := sim.LoadScenarios(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
		return 2
	}
	cmp, err := sim.Compare(scs, *random, *seed, func(msg string) {
		if !*quiet {
			fmt.Fprintln(os.Stderr, msg)
		}
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
		return 2
	}
	md, txt, svg := cmp.Markdown(), cmp.Text(), cmp.SVG()
	html := cmp.HTML()
	for name, c := range map[string]string{"sim-compare.md": md, "sim-compare.txt": txt, "sim-compare.svg": svg, "sim-compare-frontier.svg": cmp.FrontierSVG(), "sim-compare.html": html, "sim-compare.json": compareJSON(cmp)} {
		if _, err := writeReport(*reports, name, c); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
			return 2
		}
	}
	for key, tr := range cmp.Traces {
		if _, err := writeReport(filepath.Join(*reports, "sim-compare-traces"), key+".txt", tr); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
			return 2
		}
	}
	if *quiet {
		fmt.Print(strings.SplitN(txt, "\n\n", 2)[0] + "\n")
	} else {
		fmt.Print(txt)
	}
	fmt.Printf("\nreports: %s/sim-compare.{md,txt,svg,html,json}, %s/sim-compare-frontier.svg, traces of every scripted violation in %s/sim-compare-traces/\n", *reports, *reports, *reports)
	bad := unexpected(cmp)
	for _, u := range bad {
		fmt.Printf("UNEXPECTED: %s\n", u)
	}
	if len(bad) > 0 {
		return 1
	}
	return 0
}
