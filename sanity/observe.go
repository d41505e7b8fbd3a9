package sanity

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// State sources: where the state rules read the fences from.
const (
	SourceList    = "ListClusterFence"
	SourceObserve = "observe command"
	SourceNone    = "none"
)

// stateSource is where the rules that observe state read it: List when it
// works, else the observe command when one is configured, else nowhere (the
// rules skip or fail, see needList).
func (s *State) stateSource() string {
	switch {
	case !s.listMissing && s.listErr == nil:
		return SourceList
	case s.cfg.ObserveCommand != "":
		return SourceObserve
	}
	return SourceNone
}

// observed returns the fences in force, as the driver or the storage spells
// them, from the state source.
func (s *State) observed(ctx context.Context) ([]string, error) {
	read := s.list
	if s.stateSource() == SourceObserve {
		read = func(ctx context.Context, _ ...mod) ([]string, error) { return s.observe(ctx) }
	}
	listed, err := read(ctx)
	if err == nil {
		s.noteReading(listed)
	}
	return listed, err
}

// observe runs the observe command with the RPC deadline and parses its
// output: one CIDR or bare address per line; blank lines and # comments
// are ignored; a bare address is read as a single-address block.
func (s *State) observe(ctx context.Context) ([]string, error) {
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cfg.ObserveCommand)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("observe command: %v: %s", err, show(strings.TrimSpace(errOut.String())))
	}
	return parseObserved(out.String()), nil
}

// parseObserved reads the observe command's output.
func parseObserved(out string) []string {
	var cidrs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if a, err := netip.ParseAddr(line); err == nil {
			line = netip.PrefixFrom(a, a.BitLen()).String()
		}
		cidrs = append(cidrs, line)
	}
	return cidrs
}
