package simhost

import (
	"context"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

const (
	pods    = restrict.DefaultPodPath
	plugins = restrict.DefaultPluginsPath
)

// serve starts a faithful simulated host with a pod's and a plugin's data
// in place and returns its clients.
func serve(t *testing.T) (*Sim, api.FilesystemClient, api.VolumeClient, api.SmbClient) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sim") // short: a unix socket path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := New(Config{})
	for _, p := range []string{pods + `\uid1\volumes\data`, plugins + `\pv1\globalmount`} {
		if err := s.Host.MkdirAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Serve(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	conn := func(gv string) *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+dir+"/csi-proxy-"+gv, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return s, api.NewFilesystemClient(conn("filesystem-v1"), "v1"), api.NewVolumeClient(conn("volume-v1"), "v1"), api.NewSmbClient(conn("smb-v1"), "v1")
}

// intact fails the test when the pod's or the plugin's data, or
// C:\Windows, is gone, or a Windows call was made.
func intact(t *testing.T, s *Sim, calls int) {
	t.Helper()
	for _, p := range []string{pods + `\uid1\volumes\data`, plugins + `\pv1\globalmount`, `C:\Windows\System32`, hostmodel.EscapeTarget} {
		if !s.Host.Exists(p) {
			t.Errorf("%s is gone", p)
		}
	}
	if n := s.Host.CommandCount(); n != calls {
		t.Errorf("refused after Windows calls: %v", s.Host.Commands(calls))
	}
}

func refusedBy(t *testing.T, err error, rule string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), rule) {
		t.Errorf("got %v, want a refusal by %s", err, rule)
	}
}

// TestBypassInputsRefused: each input that got past the validator before
// (Win32 normalisation, device names, UNC to this machine, links leading
// outside, paths outside the kubelet directories, 8.3 aliases, case,
// streams, device prefixes), sent to the faithful simulated host the way a
// pod would, is refused by the rule named, before any Windows call, and
// leaves the host as it was.
func TestBypassInputsRefused(t *testing.T) {
	ctx := context.Background()
	rmdir := func(p string) func(api.FilesystemClient, api.VolumeClient, api.SmbClient) error {
		return func(fs api.FilesystemClient, _ api.VolumeClient, _ api.SmbClient) error {
			_, err := fs.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: p, Force: true})
			return err
		}
	}
	mkdir := func(p string) func(api.FilesystemClient, api.VolumeClient, api.SmbClient) error {
		return func(fs api.FilesystemClient, _ api.VolumeClient, _ api.SmbClient) error {
			_, err := fs.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: p})
			return err
		}
	}
	smb := func(remote string) func(api.FilesystemClient, api.VolumeClient, api.SmbClient) error {
		return func(_ api.FilesystemClient, _ api.VolumeClient, m api.SmbClient) error {
			_, err := m.NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: remote, Username: "u", Password: "p"})
			return err
		}
	}
	for _, c := range []struct {
		name string
		do   func(api.FilesystemClient, api.VolumeClient, api.SmbClient) error
		rule string
	}{
		{`Rmdir pods\. force`, rmdir(pods + `\.`), "PATH-009"},
		{`Rmdir pods\  force`, rmdir(pods + `\ `), "PATH-010"},
		{`Rmdir pods\.  force`, rmdir(pods + `\. `), "PATH-010"},
		{`Rmdir pods\.\.\ force`, rmdir(pods + `\.\.\`), "PATH-009"},
		{`Rmdir plugins\. force`, rmdir(plugins + `\.`), "PATH-009"},
		{`Rmdir plugins\  force`, rmdir(plugins + `\ `), "PATH-010"},
		{`Rmdir plugins\.  force`, rmdir(plugins + `\. `), "PATH-010"},
		{`Rmdir plugins\.\.\ force`, rmdir(plugins + `\.\.\`), "PATH-009"},
		{`Mkdir pods\CON`, mkdir(pods + `\CON`), "PATH-011"},
		{`Mkdir pods\NUL`, mkdir(pods + `\NUL`), "PATH-011"},
		{`Mkdir pods\COM1.txt`, mkdir(pods + `\COM1.txt`), "PATH-011"},
		{`Mkdir pods\CONIN$`, mkdir(pods + `\CONIN$`), "PATH-011"},
		{`Rmdir pods\NUL force`, rmdir(pods + `\NUL`), "PATH-011"},
		{`NewSmbGlobalMapping \\localhost\share`, smb(`\\localhost\share`), "SMB-005"},
		{`NewSmbGlobalMapping \\127.0.0.1\share`, smb(`\\127.0.0.1\share`), "SMB-005"},
		{`NewSmbGlobalMapping \\FENCEPROOF-NODE\share (this machine's name)`, smb(`\\FENCEPROOF-NODE\share`), "SMB-005"},
		{`Mkdir through a link leading outside`, mkdir(pods + `\` + hostmodel.EscapeLink + `\x`), "DIR-002"},
		{`Rmdir through a link leading outside, force`, rmdir(pods + `\` + hostmodel.EscapeLink + `\x`), "DIR-002"},
		{`Mkdir through the 8.3 alias of a link leading outside`, mkdir(pods + `\FENCEP~1\x`), "PATH-012"},
		{`Mkdir \\localhost\C$ path`, mkdir(`\\localhost\C$\var\lib\kubelet\pods\x`), "PATH-003"},
		{`Rmdir C:\Windows force`, rmdir(`C:\Windows`), "DIR-001"},
		{`Rmdir the pod path itself, force`, rmdir(pods), "DIR-001"},
		{`Mkdir with the Kelvin sign for K`, mkdir("C:\\var\\lib\\\u212aubelet\\pods\\x"), "DIR-001"},
		{`Mkdir through the plugins path's 8.3 alias`, mkdir(`C:\var\lib\kubelet\plugins\KUBERN~1.IO\csi\x`), "PATH-012"},
		{`Mkdir pods\x::$INDEX_ALLOCATION`, mkdir(pods + `\x::$INDEX_ALLOCATION`), "PATH-005"},
		{`Mkdir \\?\ path`, mkdir(`\\?\` + pods + `\x`), "PATH-003"},
		{`Mkdir \\.\ path`, mkdir(`\\.\` + pods + `\x`), "PATH-003"},
		{`MountVolume onto C:\Windows\Temp`, func(fs api.FilesystemClient, v api.VolumeClient, _ api.SmbClient) error {
			_, err := v.MountVolume(ctx, &api.VolumeMountVolumeRequest{VolumeId: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000001}\`, TargetPath: `C:\Windows\Temp`})
			return err
		}, "DIR-001"},
		{`MountVolume of the OS volume`, func(fs api.FilesystemClient, v api.VolumeClient, _ api.SmbClient) error {
			_, err := v.MountVolume(ctx, &api.VolumeMountVolumeRequest{VolumeId: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`, TargetPath: pods + `\uid1\m`})
			return err
		}, "SYSDISK-001"},
		{`CreateSymlink to a link leading outside`, func(fs api.FilesystemClient, _ api.VolumeClient, _ api.SmbClient) error {
			_, err := fs.CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: plugins + `\` + hostmodel.EscapeLink, TargetPath: pods + `\uid1\l`})
			return err
		}, "LINK-005"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, fs, v, m := serve(t)
			calls := s.Host.CommandCount()
			refusedBy(t, c.do(fs, v, m), c.rule)
			intact(t, s, calls)
			if got := s.Host.SMBMappings(); len(got) != 0 {
				t.Errorf("mappings left: %v", got)
			}
		})
	}
}
