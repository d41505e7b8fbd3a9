package reference_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/reference"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost"
	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

// shortDir is a temporary directory with a short path: a unix socket
// path is at most 107 bytes.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "lane")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// host is one lane under test: a directory of sockets and its clients.
type host struct {
	name  string
	conns map[string]*grpc.ClientConn
}

func dial(t *testing.T, name, dir string) host {
	h := host{name: name, conns: map[string]*grpc.ClientConn{}}
	for _, gv := range api.Versions {
		c, err := grpc.NewClient("unix://"+dir+"/"+gv.PipeBase(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		h.conns[gv.Group+"/"+gv.Version] = c
	}
	return h
}

// flow is a sequence of valid calls a driver makes, on one version of
// each group it uses; step returns an error to compare.
type flow struct {
	name  string
	steps []func(ctx context.Context, h host, v map[string]string) (string, error)
}

const (
	plugins = restrict.DefaultPluginsPath
	pods    = restrict.DefaultPodPath
)

// validSeed draws the valid names both hosts are sent (logged by the
// test that sends them).
var validSeed = uint64(time.Now().UnixNano())

var validDraw = restrict.NewDraw(validSeed, restrict.Place{Plugins: plugins, Pods: pods})

func fsc(h host, v map[string]string) api.FilesystemClient {
	return api.NewFilesystemClient(h.conns["filesystem/"+v["filesystem"]], v["filesystem"])
}

func step(what string, do func(ctx context.Context, h host, v map[string]string) error) func(context.Context, host, map[string]string) (string, error) {
	return func(ctx context.Context, h host, v map[string]string) (string, error) { return what, do(ctx, h, v) }
}

// flows are what csi-proxy-based drivers send: an SMB volume staged and
// published (csi-driver-smb), a block volume (a disk driver on the volume
// and filesystem groups), directories with names Windows allows, an iSCSI
// session and the service calls.
var flows = []flow{
	{"smb stage and publish", []func(context.Context, host, map[string]string) (string, error){
		step("Mkdir the staging parent", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Mkdir(ctx, &api.FilesystemMkdirRequest{Path: plugins + `\smb.csi.k8s.io\pv1`})
			return err
		}),
		step("NewSmbGlobalMapping with local_path", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewSmbClient(h.conns["smb/"+v["smb"]], v["smb"]).NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{
				RemotePath: hostmodel.DefaultSMBShare, LocalPath: plugins + `\smb.csi.k8s.io\pv1\globalmount`, Username: "u", Password: "p"})
			return err
		}),
		step("Mkdir the publish parent", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Mkdir(ctx, &api.FilesystemMkdirRequest{Path: pods + `\uid1\volumes\kubernetes.io~csi\pv1`})
			return err
		}),
		step("CreateSymlink staging -> publish", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: plugins + `\smb.csi.k8s.io\pv1\globalmount`, TargetPath: pods + `\uid1\volumes\kubernetes.io~csi\pv1\mount`})
			return err
		}),
		step("IsSymlink publish", func(ctx context.Context, h host, v map[string]string) error {
			r, err := fsc(h, v).IsSymlink(ctx, &api.FilesystemIsSymlinkRequest{Path: pods + `\uid1\volumes\kubernetes.io~csi\pv1\mount`})
			if err == nil && !r.IsSymlink {
				return fmt.Errorf("not a link")
			}
			return err
		}),
		step("Rmdir publish", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Rmdir(ctx, &api.FilesystemRmdirRequest{Path: pods + `\uid1\volumes\kubernetes.io~csi\pv1\mount`})
			return err
		}),
		step("Rmdir staging link", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Rmdir(ctx, &api.FilesystemRmdirRequest{Path: plugins + `\smb.csi.k8s.io\pv1\globalmount`})
			return err
		}),
		step("RemoveSmbGlobalMapping", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewSmbClient(h.conns["smb/"+v["smb"]], v["smb"]).RemoveSmbGlobalMapping(ctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: hostmodel.DefaultSMBShare})
			return err
		}),
	}},
	{"block volume stage and publish", []func(context.Context, host, map[string]string) (string, error){
		step("Mkdir staging", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Mkdir(ctx, &api.FilesystemMkdirRequest{Path: plugins + `\pd.csi\pv2\globalmount`})
			return err
		}),
		step("PathExists staging", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).PathExists(ctx, &api.FilesystemPathExistsRequest{Path: plugins + `\pd.csi\pv2\globalmount`})
			return err
		}),
		step("Mkdir the publish parent, twice", func(ctx context.Context, h host, v map[string]string) error {
			c := fsc(h, v)
			if _, err := c.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: pods + `\uid2\volumes\kubernetes.io~csi\pv2`}); err != nil {
				return err
			}
			_, err := c.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: pods + `\uid2\volumes\kubernetes.io~csi\pv2`})
			return err
		}),
		step("CreateSymlink staging -> publish", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: plugins + `\pd.csi\pv2\globalmount`, TargetPath: pods + `\uid2\volumes\kubernetes.io~csi\pv2\mount`})
			return err
		}),
		step("Rmdir publish, then forced Rmdir of it again (gone)", func(ctx context.Context, h host, v map[string]string) error {
			c := fsc(h, v)
			if _, err := c.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: pods + `\uid2\volumes\kubernetes.io~csi\pv2\mount`}); err != nil {
				return err
			}
			_, err := c.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: pods + `\uid2\volumes\kubernetes.io~csi\pv2\mount`, Force: true})
			return err
		}),
		step("Rmdir staging, forced", func(ctx context.Context, h host, v map[string]string) error {
			_, err := fsc(h, v).Rmdir(ctx, &api.FilesystemRmdirRequest{Path: plugins + `\pd.csi\pv2`, Force: true})
			return err
		}),
	}},
	{"directory names Windows allows", func() []func(context.Context, host, map[string]string) (string, error) {
		var out []func(context.Context, host, map[string]string) (string, error)
		for _, c := range restrict.Valid {
			if c.Kind != restrict.KindPath {
				continue
			}
			p := validDraw.Probe(c, c.Kind).Value // one draw, sent to both hosts
			out = append(out, step("Mkdir "+c.Name+" "+p, func(ctx context.Context, h host, v map[string]string) error {
				_, err := fsc(h, v).Mkdir(ctx, &api.FilesystemMkdirRequest{Path: p})
				return err
			}))
		}
		return out
	}()},
	{"forms both accept", []func(context.Context, host, map[string]string) (string, error){
		step(`NewSmbGlobalMapping \\server\share\ (a trailing separator)`, func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewSmbClient(h.conns["smb/"+v["smb"]], v["smb"]).NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{
				RemotePath: hostmodel.DefaultSMBShare + `\`, Username: "u", Password: "p"})
			return err
		}),
		step(`RemoveSmbGlobalMapping \\server\share\`, func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewSmbClient(h.conns["smb/"+v["smb"]], v["smb"]).RemoveSmbGlobalMapping(ctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: hostmodel.DefaultSMBShare + `\`})
			return err
		}),
		step(`IsVolumeFormatted \\.\Volume{GUID}\ (the KEP's form)`, func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewVolumeClient(h.conns["volume/"+v["volume"]], v["volume"]).IsVolumeFormatted(ctx, &api.VolumeIsVolumeFormattedRequest{VolumeId: `\\.\Volume{F3E9C0DE-0000-4000-8000-000000000000}`})
			return err
		}),
	}},
	{"iscsi session", []func(context.Context, host, map[string]string) (string, error){
		step("AddTargetPortal, port 0", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewIscsiClient(h.conns["iscsi/"+v["iscsi"]], v["iscsi"]).AddTargetPortal(ctx, &api.IscsiAddTargetPortalRequest{TargetPortal: &api.IscsiTargetPortal{TargetAddress: hostmodel.DefaultPortal}})
			return err
		}),
		step("ConnectTarget", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewIscsiClient(h.conns["iscsi/"+v["iscsi"]], v["iscsi"]).ConnectTarget(ctx, &api.IscsiConnectTargetRequest{TargetPortal: &api.IscsiTargetPortal{TargetAddress: hostmodel.DefaultPortal, TargetPort: 3260}, Iqn: "iqn.2003-01.io.fenceproof.sim:target0"})
			return err
		}),
		step("DisconnectTarget", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewIscsiClient(h.conns["iscsi/"+v["iscsi"]], v["iscsi"]).DisconnectTarget(ctx, &api.IscsiDisconnectTargetRequest{TargetPortal: &api.IscsiTargetPortal{TargetAddress: hostmodel.DefaultPortal, TargetPort: 3260}, Iqn: "iqn.2003-01.io.fenceproof.sim:target0"})
			return err
		}),
	}},
	{"service of the allow-list", []func(context.Context, host, map[string]string) (string, error){
		step("GetService MSiSCSI", func(ctx context.Context, h host, v map[string]string) error {
			_, err := api.NewSystemClient(h.conns["system/v1alpha1"], "v1alpha1").GetService(ctx, &api.SystemGetServiceRequest{Name: "MSiSCSI"})
			return err
		}),
	}},
}

// TestSimulatedHostAcceptsWhatCSIProxyAccepts: every call of the driver
// flows, on every version of each group (the flows' versions taken
// together), that csi-proxy's own server code accepts, the simulated host
// accepts too; and the reverse (the simulated host is no laxer on valid
// calls either).
func TestSimulatedHostAcceptsWhatCSIProxyAccepts(t *testing.T) {
	ctx := context.Background()
	refDir, simDir := shortDir(t), shortDir(t)
	t.Logf("valid names drawn with seed %d", validSeed)
	h := hostmodel.New(hostmodel.Standard(plugins, pods, hostmodel.EscapeLink, hostmodel.InsideLink))
	srv, err := reference.Serve(refDir, reference.Config{}, winos.New(h))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	sim := simhost.New(simhost.Config{})
	if err := sim.Serve(simDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Stop)
	ref, simc := dial(t, "csi-proxy", refDir), dial(t, "simulated", simDir)
	versions := map[string][]string{}
	for _, gv := range api.Versions {
		versions[gv.Group] = append(versions[gv.Group], gv.Version)
	}
	for i := 0; i < 6; i++ { // every version of the largest group once
		v := map[string]string{}
		for g, vs := range versions {
			v[g] = vs[i%len(vs)]
		}
		for _, f := range flows {
			for _, st := range f.steps {
				what, rerr := st(ctx, ref, v)
				_, serr := st(ctx, simc, v)
				if (rerr == nil) != (serr == nil) {
					t.Errorf("%s %v: %s: csi-proxy %v, simulated host %v", f.name, v, what, rerr, serr)
				}
			}
		}
	}
}
