package restrict

import (
	"regexp"
	"slices"
	"strings"
)

// Groups are the API groups the design names.
var Groups = []string{"disk", "filesystem", "iscsi", "smb", "system", "volume"}

// PipePrefix is the start of every csi-proxy named pipe.
const PipePrefix = `\\.\pipe\csi-proxy-`

var versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

// ValidVersion reports a Kubernetes-style API version: v1, v2beta1, v1alpha2.
func ValidVersion(s string) bool { return versionRE.MatchString(s) }

// PipeBase is the pipe's name without the \\.\pipe\ directory, e.g.
// csi-proxy-disk-v1; the simulated host names its unix sockets so.
func PipeBase(group, version string) string { return "csi-proxy-" + group + "-" + version }

// PipeName is the full named-pipe path of a group and version.
func PipeName(group, version string) string { return `\\.\pipe\` + PipeBase(group, version) }

// ParsePipe checks a pipe name (PIPE-001), full or base, and returns its
// group and version.
func (v *Validator) ParsePipe(name string) (group, version string, err error) {
	base := strings.TrimPrefix(name, `\\.\pipe\`)
	rest, ok := strings.CutPrefix(base, "csi-proxy-")
	g, ver, _ := strings.Cut(rest, "-")
	if !ok || !slices.Contains(Groups, g) || !ValidVersion(ver) {
		if f := v.fail("PIPE-001", "pipe", "%q is not csi-proxy-<group>-<version> with a known group", name); f != nil {
			return "", "", f
		}
	}
	return g, ver, nil
}
