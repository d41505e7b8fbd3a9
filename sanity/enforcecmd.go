package sanity

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"time"
)

// The enforce command (--enforce-command CMD, sanity/README.md "Seeing
// enforcement"): the suite runs `sh -c 'CMD ADDR'` with ADDR a bare
// address (192.0.2.7, 2001:db8::7), and the command tries one write to the
// storage from that address. Its answer is the last line of its standard
// output that is exactly allowed, refused or untestable; without such a
// line, its exit status: 0 allowed, 1 refused. Any other status, or no
// answer within --enforce-timeout, is an error of the command, never a
// verdict on the driver.

// writeAnswer is what the enforce command says of one write attempt.
type writeAnswer string

// The answers.
const (
	writeAllowed    writeAnswer = "allowed"    // the write landed
	writeRefused    writeAnswer = "refused"    // the write was refused or never answered
	writeUntestable writeAnswer = "untestable" // the command cannot write from this address's family (e.g. a storage without IPv6 clients)
)

// DefaultEnforceTimeout bounds one run of the enforce command.
const DefaultEnforceTimeout = 30 * time.Second

// enforceOutputLimit is how much of the command's output an error quotes.
const enforceOutputLimit = 400

// tryWrite runs the enforce command for addr and reads its answer.
func (s *State) tryWrite(ctx context.Context, addr netip.Addr) (writeAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.EnforceTimeout.Duration)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cfg.EnforceCommand+" "+addr.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd) // the command's own children (a write tool it starts) go with it
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if a, ok := statedAnswer(stdout.Bytes()); ok {
		return a, nil
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("the enforce command did not answer for %s within --enforce-timeout %s%s", addr, s.cfg.EnforceTimeout.Duration, quoteOutput(stdout, stderr))
	case err == nil:
		return writeAllowed, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return writeRefused, nil
	case errors.As(err, &exit):
		return "", fmt.Errorf("the enforce command exited %d for %s without stating allowed, refused or untestable%s", exit.ExitCode(), addr, quoteOutput(stdout, stderr))
	}
	return "", fmt.Errorf("the enforce command could not run for %s: %v", addr, err)
}

// statedAnswer is the last line of out that states an answer.
func statedAnswer(out []byte) (writeAnswer, bool) {
	var last writeAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		switch a := writeAnswer(strings.TrimSpace(sc.Text())); a {
		case writeAllowed, writeRefused, writeUntestable:
			last = a
		}
	}
	return last, last != ""
}

// quoteOutput is the end of what the command printed, cleaned, for an error.
func quoteOutput(stdout, stderr bytes.Buffer) string {
	out := strings.TrimSpace(stdout.String() + "\n" + stderr.String())
	if out == "" {
		return " (it printed nothing)"
	}
	if len(out) > enforceOutputLimit {
		out = "…" + out[len(out)-enforceOutputLimit:]
	}
	return ": " + show(out)
}
