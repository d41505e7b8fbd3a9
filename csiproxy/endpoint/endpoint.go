// Package endpoint dials csi-proxy API groups: on Linux through unix sockets
// in one directory named like the pipes (unix:///run/csi-proxy/ serves
// csi-proxy-disk-v1 and so on), on Windows through csi-proxy's named pipes
// (npipe://./pipe/ reaches \\.\pipe\csi-proxy-disk-v1).
package endpoint

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	grammar "github.com/fenceproof/fenceproof/endpoint"
)

// Endpoint is a parsed --endpoint.
type Endpoint struct {
	// Scheme is "unix" or "npipe".
	Scheme string
	// Dir is the socket directory (unix) or the pipe directory (npipe,
	// \\.\pipe\).
	Dir string
}

// Parse reads unix:///dir or npipe://./pipe/ (npipe:// alone means the
// same), in the grammar of package endpoint.
func Parse(s string) (Endpoint, error) {
	e, err := grammar.Parse(s, grammar.Directory)
	if err != nil {
		return Endpoint{}, err
	}
	return Endpoint{Scheme: e.Scheme, Dir: e.Address}, nil
}

// Address is where one pipe name is reached.
func (e Endpoint) Address(pipeBase string) string {
	if e.Scheme == grammar.NPipe {
		return e.Dir + pipeBase
	}
	return filepath.Join(e.Dir, pipeBase)
}

// Dial connects to one group and version (lazily: errors surface on the
// first call).
func (e Endpoint) Dial(group, version string) (*grpc.ClientConn, error) {
	return e.DialName(restrict.PipeBase(group, version))
}

// DialName connects to one pipe name, with more dial options if given.
func (e Endpoint) DialName(name string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	addr := e.Address(name)
	return grpc.NewClient("passthrough:///"+name, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return dial(ctx, e.Scheme, addr)
		})}, opts...)...)
}

// Discover lists the pipe names served. For unix it lists the sockets in
// the directory whose names start with csi-proxy; for npipe it probes every
// group version of csiproxy/api (Windows offers no listing of a pipe prefix
// to an unprivileged client).
func (e Endpoint) Discover(ctx context.Context) ([]string, error) {
	var out []string
	if e.Scheme == grammar.Unix {
		ents, err := os.ReadDir(e.Dir)
		if err != nil {
			return nil, err
		}
		for _, d := range ents {
			if strings.HasPrefix(d.Name(), "csi-proxy") && d.Type()&os.ModeSocket != 0 {
				out = append(out, d.Name())
			}
		}
		sort.Strings(out)
		return out, nil
	}
	for _, gv := range api.Versions {
		name := gv.PipeBase()
		if c, err := dial(ctx, e.Scheme, e.Address(name)); err == nil {
			_ = c.Close()
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}
