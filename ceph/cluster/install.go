//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Packages are the Debian packages the cluster runs (Ceph 16.2 Pacific on
// Debian 12). Building the Ceph backend and writer also needs librados-dev.
var Packages = []string{"ceph-mon", "ceph-osd", "ceph-mgr", "ceph-common"}

// ErrMissingPackages is returned when Ceph's packages are missing and
// cannot be installed (not root, or Install not set).
var ErrMissingPackages = errors.New("Ceph packages missing")

// ErrNotRoot is returned when the cluster cannot be started because it
// needs network namespaces (root).
var ErrNotRoot = errors.New("a Ceph cluster in a network namespace needs root")

// RequireRoot returns ErrNotRoot unless running as root.
func RequireRoot() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	return nil
}

// Missing returns the packages of Packages that are not installed.
func Missing() []string { return missing(Packages) }

// missing returns the packages of pkgs that are not installed.
func missing(pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		st, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output()
		if err != nil || !strings.Contains(string(st), "install ok installed") {
			out = append(out, p)
		}
	}
	return out
}

// EnsurePackages installs the missing packages with apt-get when install
// is set and running as root; otherwise it returns ErrMissingPackages
// naming them. Without mgr, ceph-mgr is not needed.
func EnsurePackages(ctx context.Context, install, mgr bool, log *slog.Logger) error {
	need := Packages
	if !mgr {
		need = slices.DeleteFunc(slices.Clone(Packages), func(p string) bool { return p == "ceph-mgr" })
	}
	absent := missing(need)
	if len(absent) == 0 {
		return nil
	}
	if !install || os.Geteuid() != 0 {
		return fmt.Errorf("%w: %s (apt-get install %s, as root)", ErrMissingPackages, strings.Join(absent, " "), strings.Join(absent, " "))
	}
	log.Info("ceph: installing Debian packages", "packages", absent)
	args := append([]string{"-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q", "--no-install-recommends"}, absent...)
	if _, err := aptGet(ctx, args...); err != nil {
		if _, uerr := aptGet(ctx, "-o", "DPkg::Lock::Timeout=600", "update", "-q"); uerr != nil {
			return errors.Join(err, uerr)
		}
		if _, err := aptGet(ctx, args...); err != nil {
			return err
		}
	}
	if m := missing(need); len(m) > 0 {
		return fmt.Errorf("%w after apt-get install: %s", ErrMissingPackages, strings.Join(m, " "))
	}
	return nil
}

func aptGet(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := string(out)
		if len(tail) > 800 {
			tail = tail[len(tail)-800:]
		}
		return out, fmt.Errorf("apt-get %s: %w: %s", strings.Join(args, " "), err, tail)
	}
	return out, nil
}
