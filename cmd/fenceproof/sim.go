package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fenceproof/fenceproof/sim"
)

func init() {
	register("sim", "fencing simulator: run a scenario, explore random faults, compare policies", simMain)
}

const simUsage = `usage:
  fenceproof sim run SCENARIO.yaml [--policy P] [--seed N] [--reports DIR] [--quiet]
  fenceproof sim explore [--policy P] [--runs N] [--seed S] [--reports DIR]
  fenceproof sim compare [--scenarios DIR] [--random N] [--seed S] [--reports DIR]

policies: seed, rook, mhc-only, safe
exit codes: 0 as expected, 1 a violation the scenario does not expect (or an
expected one that did not happen), 2 bad input`

func simMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, simUsage)
		return 2
	}
	switch args[0] {
	case "run":
		return simRun(args[1:])
	case "explore":
		return simExplore(args[1:])
	case "compare":
		return simCompare(args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(os.Stderr, simUsage)
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
	policy := fs.String("policy", "safe", "policy: seed, rook, mhc-only, safe")
	seed := fs.Int64("seed", -1, "RNG seed (default: the scenario's seed)")
	reports := fs.String("reports", "reports", "directory for the timeline, SVG and HTML")
	quiet := fs.Bool("quiet", false, "print only the summary, not the timeline")
	path, err := parseWithPositional(fs, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n%s\n", err, simUsage)
		return 2
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
	if *seed >= 0 {
		sd = uint64(*seed)
	}
	cfg := sc.Config(pol, sd)
	cfg.Record = true
	r, err := sim.RunConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim run: %s: %v\n", path, err)
		return 2
	}
	out := io.Writer(os.Stdout)
	if *quiet {
		fmt.Fprint(out, r.Summary())
	} else {
		fmt.Fprint(out, r.Text())
	}
	base := fmt.Sprintf("sim-%s-%s-%d", sc.Name, pol.Name, sd)
	for ext, content := range map[string]string{".txt": r.Text(), ".svg": r.SVG(), ".html": r.HTML()} {
		if _, err := writeReport(*reports, base+ext, content); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
			return 2
		}
	}
	fmt.Fprintf(out, "# reports: %s/%s.{txt,svg,html}\n", *reports, base)
	if len(r.Violations) > 0 {
		inv := r.Violations[0].Inv
		min, faults, err := sim.MinimizeResult(sc, pol, sd, inv)
		if err == nil {
			fmt.Fprintf(out, "\n# VIOLATION of inv%d with policy %s, seed %d. Minimized fault schedule (%d of %d faults):\n", inv, pol.Name, sd, len(faults), len(sc.Faults))
			for _, f := range faults {
				fmt.Fprintf(out, "#   - %s\n", sc.FaultString(f))
			}
			fmt.Fprintf(out, "# shortest trace:\n%s", min.Text())
			if _, err := writeReport(*reports, base+"-minimal.txt", min.Text()); err != nil {
				fmt.Fprintf(os.Stderr, "fenceproof sim run: %v\n", err)
			}
		}
	}
	got := r.Verdict()
	want, ok := sc.Expect[pol.Name]
	switch {
	case ok && want == got:
		fmt.Fprintf(out, "# as expected by %s: %s\n", filepath.Base(path), got)
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
	policy := fs.String("policy", "safe", "policy: seed, rook, mhc-only, safe")
	runs := fs.Int("runs", 100, "number of random fault schedules")
	seed := fs.Uint64("seed", 1, "first seed; run i uses seed+i")
	reports := fs.String("reports", "reports", "directory for minimized scenarios and traces")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, simUsage)
		return 2
	}
	pol, err := sim.LookupPolicy(*policy)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "explore: policy %s, %d runs, seeds %d..%d\n", pol.Name, *runs, *seed, *seed+uint64(*runs)-1)
	step := max(*runs/20, 1)
	findings, err := sim.Explore(pol, *runs, *seed, func(done, viol int) {
		if done%step == 0 || done == *runs {
			fmt.Fprintf(os.Stderr, "explore: %d/%d runs, %d with violations\n", done, *runs, viol)
		}
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
		return 2
	}
	for _, f := range findings {
		r := f.Minimal
		fmt.Printf("\n== seed %d, policy %s: %s\n", f.Seed, pol.Name, r.Verdict())
		for _, v := range r.Violations {
			fmt.Printf("   %s\n", v)
		}
		y := sim.ScenarioYAML(f.Scenario)
		p, err := writeReport(filepath.Join(*reports, "sim-explore-"+pol.Name), fmt.Sprintf("seed-%d.yaml", f.Seed), y)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim explore: %v\n", err)
			return 2
		}
		fmt.Printf("   replay: fenceproof sim explore --policy %s --runs 1 --seed %d\n", pol.Name, f.Seed)
		fmt.Printf("   minimized scenario (%d faults): %s (fenceproof sim run %s --policy %s)\n", len(f.Scenario.Faults), p, p, pol.Name)
		fmt.Print(indent(r.Text(), "   | "))
	}
	fmt.Printf("\nexplore: policy %s: %d of %d random schedules broke an invariant\n", pol.Name, len(findings), *runs)
	if len(findings) > 0 {
		return 1
	}
	return 0
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}

func simCompare(args []string) int {
	fs := flag.NewFlagSet("sim compare", flag.ContinueOnError)
	dir := fs.String("scenarios", "fixtures/scenarios", "directory of scenario files")
	random := fs.Int("random", 40, "random fault schedules per policy")
	seed := fs.Uint64("seed", 1, "first seed of the random schedules")
	reports := fs.String("reports", "reports", "directory for sim-compare.{md,txt,svg,html}")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, simUsage)
		return 2
	}
	scs, err := sim.LoadScenarios(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
		return 2
	}
	cmp, err := sim.Compare(scs, *random, *seed, func(msg string) { fmt.Fprintln(os.Stderr, msg) })
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim compare: %v\n", err)
		return 2
	}
	md, txt, svg := cmp.Markdown(), cmp.Text(), cmp.SVG()
	html := "<!doctype html><meta charset=utf-8><title>fenceproof sim compare</title>\n" + svg + "<pre>" + strings.ReplaceAll(strings.ReplaceAll(md, "&", "&amp;"), "<", "&lt;") + "</pre>\n"
	for name, c := range map[string]string{"sim-compare.md": md, "sim-compare.txt": txt, "sim-compare.svg": svg, "sim-compare.html": html} {
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
	fmt.Print(txt)
	fmt.Printf("\nreports: %s/sim-compare.{md,txt,svg,html}, traces of every scripted violation in %s/sim-compare-traces/\n", *reports, *reports)
	bad := false
	for _, sc := range cmp.Scenarios {
		for p, want := range cmp.Expected[sc] {
			if got := cmp.Verdicts[sc][p]; got != want {
				fmt.Printf("UNEXPECTED: %s with %s: expected %s, got %s\n", sc, p, want, got)
				bad = true
			}
		}
	}
	for _, st := range cmp.Stats {
		if st.Policy == "safe" && st.ViolatingRuns > 0 {
			fmt.Printf("UNEXPECTED: safe broke an invariant in %d runs\n", st.ViolatingRuns)
			bad = true
		}
	}
	if bad {
		return 1
	}
	return 0
}
