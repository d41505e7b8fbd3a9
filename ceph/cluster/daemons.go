//go:build linux

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// run runs a program (inside network namespace netns when it is not empty)
// and returns its standard output; a failure carries the end of its
// standard error.
func run(ctx context.Context, netns, prog string, args ...string) ([]byte, error) {
	if netns != "" {
		args = append([]string{"netns", "exec", netns, prog}, args...)
		prog = "ip"
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 600 {
			msg = "..." + msg[len(msg)-600:]
		}
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, msg)
	}
	return out.Bytes(), nil
}

// Ceph runs the ceph CLI as client.admin inside the cluster's namespace
// with -f json and returns its standard output.
func (c *Cluster) Ceph(ctx context.Context, args ...string) ([]byte, error) {
	base := []string{"-c", c.AdminConf(), "--connect-timeout", "30", "-f", "json"}
	return run(ctx, c.st.NetNS, "ceph", append(base, args...)...)
}

// Exec runs any program inside the cluster's namespace (e.g. rados, or a
// ceph command with other flags) and returns its standard output.
func (c *Cluster) Exec(ctx context.Context, prog string, args ...string) ([]byte, error) {
	return run(ctx, c.st.NetNS, prog, args...)
}

// SetConfig sets a configuration option at run time in the mon's
// configuration database (`ceph config set who key value`); who is
// "global", "mon", "osd", "osd.1", "client"...
func (c *Cluster) SetConfig(ctx context.Context, who, key, value string) error {
	_, err := c.Ceph(ctx, "config", "set", who, key, value)
	return err
}

// TellConfig changes a running daemon's option at once (`ceph tell
// <daemon> config set`; daemon "mon.a", "osd.0", "osd.*"). Unlike SetConfig
// it does not go through the mon's proposal, and it does not outlive the
// daemon.
func (c *Cluster) TellConfig(ctx context.Context, daemon, key, value string) error {
	_, err := c.Ceph(ctx, "tell", daemon, "config", "set", key, value)
	return err
}

// pidFile is the pid file of a daemon ("mon.a", "osd.0", "mgr.x").
func (c *Cluster) pidFile(name string) string { return c.path("run", name+".pid") }

// startDaemon starts ceph-<kind> -i id (it daemonizes) and waits for its pid
// file and process.
func (c *Cluster) startDaemon(ctx context.Context, kind, id string) error {
	name := kind + "." + id
	os.Remove(c.pidFile(name))
	if _, err := run(ctx, c.st.NetNS, "ceph-"+kind, "-c", c.AdminConf(), "-i", id); err != nil {
		return err
	}
	return poll(ctx, name+"'s pid file", func() (bool, error) {
		pid, err := c.daemonPID(name)
		return err == nil && pid > 0, nil
	})
}

// daemonPID returns the pid of a running daemon, or an error when it does
// not run (no pid file, or its process is gone or is something else).
func (c *Cluster) daemonPID(name string) (int, error) {
	raw, err := os.ReadFile(c.pidFile(name))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: bad pid file", name)
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !bytes.Contains(cmdline, []byte(c.AdminConf())) {
		return 0, fmt.Errorf("%s: process %d is not running", name, pid)
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return 0, fmt.Errorf("%s: process %d exited", name, pid)
		}
	}
	return pid, nil
}

// signal sends sig to a daemon; with wait, it waits for the process to end
// (SIGKILL after 20 s).
func (c *Cluster) signal(name string, sig syscall.Signal, wait bool) error {
	pid, err := c.daemonPID(name)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if !wait {
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := c.daemonPID(name); err != nil {
			return nil
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(10 * time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// StartMon starts mon.a and waits until the mons answer.
func (c *Cluster) StartMon(ctx context.Context) error { return c.StartMonID(ctx, "a") }

// StartMonID starts mon id and waits until the mons answer (a quorum).
func (c *Cluster) StartMonID(ctx context.Context, id string) error {
	if err := c.startDaemon(ctx, "mon", id); err != nil {
		return err
	}
	return c.waitMons(ctx)
}

// waitMons waits until `ceph mon stat` answers.
func (c *Cluster) waitMons(ctx context.Context) error {
	return poll(ctx, "the mons to answer", func() (bool, error) {
		_, err := c.Ceph(ctx, "mon", "stat")
		return err == nil, nil
	})
}

// StopMon stops mon.a (SIGTERM) and waits for it to exit.
func (c *Cluster) StopMon() error { return c.StopMonID("a") }

// StopMonID stops mon id (SIGTERM) and waits for it to exit.
func (c *Cluster) StopMonID(id string) error { return c.signal("mon."+id, syscall.SIGTERM, true) }

// KillMonID kills mon id (SIGKILL), as a crash or a power loss would.
func (c *Cluster) KillMonID(id string) error { return c.signal("mon."+id, syscall.SIGKILL, true) }

// PauseMon freezes mon.a (SIGSTOP): its sockets stay open and nothing
// answers, as with a hung or partitioned mon. ResumeMon undoes it.
func (c *Cluster) PauseMon() error { return c.PauseMonID("a") }

// ResumeMon continues a paused mon.a (SIGCONT).
func (c *Cluster) ResumeMon() error { return c.ResumeMonID("a") }

// PauseMonID freezes mon id (SIGSTOP).
func (c *Cluster) PauseMonID(id string) error { return c.signal("mon."+id, syscall.SIGSTOP, false) }

// ResumeMonID continues a paused mon id (SIGCONT).
func (c *Cluster) ResumeMonID(id string) error { return c.signal("mon."+id, syscall.SIGCONT, false) }

// PauseOSD freezes OSD id (SIGSTOP): its connections stay open and it
// answers no heartbeat, as on a hung host, so its peers report it only
// after osd_heartbeat_grace. ResumeOSD undoes it.
func (c *Cluster) PauseOSD(id int) error {
	return c.signal("osd."+strconv.Itoa(id), syscall.SIGSTOP, false)
}

// ResumeOSD continues a paused OSD (SIGCONT); it finds itself marked down
// ("wrongly marked me down") and boots again.
func (c *Cluster) ResumeOSD(id int) error {
	return c.signal("osd."+strconv.Itoa(id), syscall.SIGCONT, false)
}

// StopOSD stops OSD id cleanly (SIGTERM) and waits for it to exit.
func (c *Cluster) StopOSD(id int) error {
	return c.signal("osd."+strconv.Itoa(id), syscall.SIGTERM, true)
}

// KillOSD kills OSD id (SIGKILL), as a crash or a power loss would; with
// memstore its data is lost.
func (c *Cluster) KillOSD(id int) error {
	return c.signal("osd."+strconv.Itoa(id), syscall.SIGKILL, true)
}

// StartOSD starts a stopped OSD again (it rejoins with its store).
func (c *Cluster) StartOSD(ctx context.Context, id int) error {
	if _, err := c.daemonPID("osd." + strconv.Itoa(id)); err == nil {
		return fmt.Errorf("osd.%d is running", id)
	}
	return c.startDaemon(ctx, "osd", strconv.Itoa(id))
}

// OSDRunning reports whether OSD id's process runs.
func (c *Cluster) OSDRunning(id int) bool {
	_, err := c.daemonPID("osd." + strconv.Itoa(id))
	return err == nil
}

// DaemonLog is the path of a daemon's log ("mon.a", "osd.0", "mgr.x").
func (c *Cluster) DaemonLog(name string) string { return c.path("log", name+".log") }

// daemons lists every daemon name that has a pid file.
func (c *Cluster) daemons() []string {
	ents, _ := os.ReadDir(c.path("run"))
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".pid"); ok {
			out = append(out, n)
		}
	}
	return out
}

// poll calls fn every 100-500 ms until it reports done, fails, or ctx ends.
func poll(ctx context.Context, what string, fn func() (bool, error)) error {
	wait := 100 * time.Millisecond
	for {
		done, err := fn()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*3/2, 500*time.Millisecond)
	}
}
