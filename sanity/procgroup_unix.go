//go:build unix

package sanity

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own and makes its cancel
// send SIGTERM to the whole group, so that what the command started goes
// with it and may clean up first (the Ceph probe removes its namespace);
// exec kills the command itself after its WaitDelay.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
