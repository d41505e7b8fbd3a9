package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// simCalibrate runs the simulator's calibration against a real Ceph and the
// replay of a kind fencing run, and writes reports/calibration.md. Exit 1
// when the simulator differs beyond the stated tolerances, 2 on bad input
// or when the real Ceph cannot run (not root, packages missing).
func simCalibrate(args []string) int {
	fs := flag.NewFlagSet("sim calibrate", flag.ContinueOnError)
	reports := fs.String("reports", "reports", "directory for calibration.md")
	fencing := fs.String("fencing", filepath.Join("fixtures", "sim-calibration", "fencing-c7-timeline.txt"), "a kind fencing run's DR rehearsal timeline (reports/fencing/c7/timeline.txt of suites/fencing) to replay")
	quiet := fs.Bool("quiet", false, "no progress")
	if code, ok := simFlags(fs, args, noPositional(fs)); !ok {
		return code
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	e := calibrate.Default
	log.Info("calibrate: real Ceph run", "osds", e.OSDs, "outage", e.Outage)
	real, err := calibrate.RunReal(ctx, e, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim calibrate: %v\n", err)
		return 2
	}
	// the simulated OSD restarts when the real one did (the schedule, not an outcome)
	simulated, err := calibrate.RunSim(e, real.Events[calibrate.EvRestart])
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim calibrate: %v\n", err)
		return 2
	}
	cmp := calibrate.Compare(e, real, simulated)
	md := calibrate.Markdown(cmp, replay)
	p, err := writeReport(*reports, "calibration.md", md)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sim calibrate: %v\n", err)
		return 2
	}
	fmt.Print(md)
	fmt.Printf("calibrate: report in %s\n", p)
	if len(cmp.Problems)+len(replay.Problems) > 0 {
		return 1
	}
	return 0
}
