package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// realRunner runs experiments on a real Ceph; only bin/fenceproof-ceph
// (build tag ceph, librados) has it (simcalibrate_ceph.go).
var realRunner func(ctx context.Context, exps []*calibrate.Experiment, log *slog.Logger, done func(*calibrate.Timeline) error) error

// simCalibrate compares the simulator with real Ceph runs of the
// calibration experiments - every checked-in run, and with --run new runs
// on this machine besides - runs the perturbed models against them and replays a
// kind fencing run, and writes reports/calibration.md with a plot per
// experiment. Exit 1 when the shipped model fails an experiment (known
// gaps aside) or a perturbed model passes them all, 2 on bad input or when
// the real Ceph cannot run.
func simCalibrate(args []string) int {
	fs := flag.NewFlagSet("sim calibrate", flag.ContinueOnError)
	reports := fs.String("reports", "reports", "directory for calibration.md and calibration/*.svg")
	data := fs.String("data", filepath.Join("fixtures", "sim-calibration"), "the checked-in real runs' timelines (<experiment>/<started>.json, every run kept)")
	run := fs.Bool("run", false, "run the experiments on a real Ceph first (root; bin/fenceproof-ceph) and judge the model on the new runs with the checked-in ones")
	save := fs.String("save", "", "with --run: where the new timelines go (default REPORTS/calibration; fixtures/sim-calibration adds them to the checked-in ones)")
	only := fs.String("only", "", "comma-separated experiments (default: all)")
	fencing := fs.String("fencing", filepath.Join("fixtures", "sim-calibration", "fencing-c7-timeline.txt"), "a kind fencing run's DR rehearsal timeline (reports/fencing/c7/timeline.txt of suites/fencing) to replay")
	quiet := fs.Bool("quiet", false, "print only the summary")
	if code, ok := simFlags(fs, args, noPositional(fs)); !ok {
		return code
	}
	exps := calibrate.Experiments
	if *only != "" {
		exps = nil
		for _, n := range strings.Split(*only, ",") {
			e, err := calibrate.Lookup(strings.TrimSpace(n))
			if err != nil {
				return badArg("sim calibrate", "--only: %v", err)
			}
			exps = append(exps, e)
		}
	}
	raw, err := os.ReadFile(*fencing)
	if err != nil {
		return badArg("sim calibrate", "%v", err)
	}
	replay, err := calibrate.ReplayFencing(*fencing, raw)
	if err != nil {
		return badArg("sim calibrate", "%v", err)
	}
	lvl := slog.LevelInfo
	if *quiet {
		lvl = slog.LevelError
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	reals := map[string][]*calibrate.Timeline{}
	var have []*calibrate.Experiment
	checkedIn := 0
	for _, e := range exps {
		runs, err := calibrate.LoadRuns(*data, e.Name)
		if err != nil {
			return badArg("sim calibrate", "%v", err)
		}
		if len(runs) == 0 && !*run {
			fmt.Printf("calibrate: %-32s no real run checked in (make calibrate)\n", e.Name)
			continue
		}
		reals[e.Name] = runs
		checkedIn += len(runs)
		have = append(have, e)
	}
	exps = have
	header := fmt.Sprintf("The real runs: the %d checked-in runs in `%s`.", checkedIn, *data)
	if *run {
		if realRunner == nil {
			return badArg("sim calibrate", "--run needs bin/fenceproof-ceph (make build-ceph: librados), as root")
		}
		if *save == "" {
			*save = filepath.Join(*reports, "calibration")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		t0 := time.Now()
		err := realRunner(ctx, exps, log, func(t *calibrate.Timeline) error {
			p, err := t.Save(*save)
			log.Info("calibrate: real timeline", "experiment", t.Experiment, "file", p)
			reals[t.Experiment] = append(reals[t.Experiment], t)
			return err
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sim calibrate: %v\n", err)
			return 2
		}
		header = fmt.Sprintf("The real runs: the %d checked-in runs in `%s` and a new run of each experiment, `fenceproof-ceph sim calibrate --run` on this machine, %s, timelines in `%s`.",
			checkedIn, *data, time.Since(t0).Round(time.Second), *save)
	}
	rep := &calibrate.Report{Fencing: replay, Header: header}
	dir := filepath.Join(*reports, "calibration")
	for _, e := range exps {
		c, err := calibrate.Run(e, reals[e.Name], nil)
		if err != nil {
			return badArg("sim calibrate", "%v", err)
		}
		rep.Comparisons = append(rep.Comparisons, c)
		if _, err := writeReport(dir, e.Name+".svg", c.SVG()); err != nil {
			return badArg("sim calibrate", "%v", err)
		}
	}
	rep.Perturbed = calibrate.Perturb(reals)
	md := rep.Markdown(func(e *calibrate.Experiment) string { return "calibration/" + e.Name + ".svg" })
	p, err := writeReport(*reports, "calibration.md", md)
	if err != nil {
		return badArg("sim calibrate", "%v", err)
	}
	if !*quiet {
		fmt.Print(md)
	}
	for _, c := range rep.Comparisons {
		v := "pass"
		if !c.Pass() {
			v = "FAIL: " + strings.Join(c.Unexcused(), "; ")
		} else if len(c.Problems) > 0 {
			v = "pass but for the known gap"
		}
		fmt.Printf("calibrate: %-32s %s\n", c.Exp.Name, v)
	}
	for _, pr := range rep.Perturbed {
		by := strings.Join(pr.Rejected, ", ")
		if by == "" {
			by = "NONE (no experiment the shipped model passes fails it)"
		}
		fmt.Printf("calibrate: perturbation %-30s rejected by %s\n", pr.Name, by)
	}
	fmt.Printf("calibrate: report in %s\n", p)
	if !rep.Pass() {
		return 1
	}
	return 0
}
