package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sim subcommand's exit codes are its contract with CI jobs and
// rehearsal scripts: 0 as the scenario expects, 1 unexpected, 2 bad input.

func scenario(name string) string { return filepath.Join("..", "..", "fixtures", "scenarios", name) }

func TestSimRunExitCodes(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nclusterr: {machines: 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(scenario("api-partition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wrongExpect := filepath.Join(t.TempDir(), "api-partition.yaml")
	if err := os.WriteFile(wrongExpect, []byte(strings.Replace(string(b), "seed: inv5", "seed: pass", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"safe passes power loss", []string{"run", scenario("power-loss.yaml"), "--policy", "safe"}, 0},
		{"seed breaks inv5 as the scenario expects", []string{"run", scenario("api-partition.yaml"), "--policy", "seed"}, 0},
		{"a verdict the scenario does not expect", []string{"run", wrongExpect, "--policy", "seed"}, 1},
		{"unknown field", []string{"run", bad}, 2},
		{"unknown policy", []string{"run", scenario("power-loss.yaml"), "--policy", "yolo"}, 2},
		{"missing scenario", []string{"run", "nope.yaml"}, 2},
		{"unknown subcommand", []string{"fly"}, 2},
		{"no subcommand", []string{}, 2},
		{"sim --help", []string{"--help"}, 0},
		{"run --help", []string{"run", "--help"}, 0},
		{"explore --help", []string{"explore", "--help"}, 0},
		{"compare -h", []string{"compare", "-h"}, 0},
		{"run negative seed", []string{"run", scenario("power-loss.yaml"), "--seed", "-3"}, 2},
		{"run non-numeric seed", []string{"run", scenario("power-loss.yaml"), "--seed", "x"}, 2},
		{"run two scenarios", []string{"run", scenario("power-loss.yaml"), scenario("two-failures.yaml")}, 2},
		{"explore --runs 0", []string{"explore", "--runs", "0"}, 2},
		{"explore --runs -5", []string{"explore", "--runs", "-5"}, 2},
		{"explore unknown policy", []string{"explore", "--policy", "yolo", "--runs", "1"}, 2},
		{"explore stray argument", []string{"explore", "extra"}, 2},
		{"compare --random -1", []string{"compare", "--random", "-1"}, 2},
		{"explore --shard without --json", []string{"explore", "--shard", "0/3"}, 2},
		{"explore --shard 3/3", []string{"explore", "--shard", "3/3", "--json", "x.json"}, 2},
		{"explore --json without --shard", []string{"explore", "--json", "x.json"}, 2},
		{"merge without shards", []string{"merge"}, 2},
		{"merge a missing file", []string{"merge", "/nonexistent.json"}, 2},
		{"compare missing directory", []string{"compare", "--scenarios", "/nonexistent", "--random", "0"}, 2},
		{"calibrate without a fencing timeline", []string{"calibrate", "--fencing", "/nonexistent"}, 2},
		{"calibrate stray argument", []string{"calibrate", "extra"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--reports", t.TempDir(), "--quiet")
			if len(c.args) == 0 || c.args[0] != "run" || strings.HasPrefix(c.args[len(c.args)-1], "-h") || c.args[len(c.args)-1] == "--help" {
				args = c.args
			}
			if got := simMain(args); got != c.want {
				t.Errorf("fenceproof sim %v = %d, want %d", c.args, got, c.want)
			}
		})
	}
	if !strings.Contains(string(b), "seed: inv5") {
		t.Fatal("api-partition.yaml no longer expects inv5 for seed; update this test")
	}
}

func TestSimRunWritesReplayableReports(t *testing.T) {
	var texts []string
	for range 2 {
		dir := t.TempDir()
		if got := simMain([]string{"run", scenario("two-failures.yaml"), "--policy", "seed", "--seed", "7", "--reports", dir, "--quiet"}); got != 0 {
			t.Fatalf("exit %d", got)
		}
		for _, ext := range []string{".txt", ".svg", ".html"} {
			if _, err := os.Stat(filepath.Join(dir, "sim", "two-failures", "seed-7"+ext)); err != nil {
				t.Errorf("report %s: %v", ext, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "sim", "two-failures", "seed-7.txt"))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	if texts[0] != texts[1] {
		t.Error("two runs with seed 7 gave different timelines")
	}
}

func TestSimCompareFindsUnsafePolicies(t *testing.T) {
	dir := t.TempDir()
	if got := simMain([]string{"compare", "--scenarios", filepath.Join("..", "..", "fixtures", "scenarios"), "--random", "5", "--reports", dir}); got != 0 {
		t.Fatalf("compare exit %d, want 0 (every scripted verdict as expected, safe breaks no safety invariant)", got)
	}
	md, err := os.ReadFile(filepath.Join(dir, "sim-compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"seed", "rook", "mhc-only", "safe"} {
		if !strings.Contains(string(md), p) {
			t.Errorf("sim-compare.md does not mention policy %s", p)
		}
	}
}
