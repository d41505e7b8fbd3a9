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

// clients are a simulated host's clients, one version of each group.
type clients struct {
	fs    api.FilesystemClient
	vol   api.VolumeClient
	smb   api.SmbClient
	iscsi api.IscsiClient
	sys   api.SystemClient
}

// serve starts a faithful simulated host with a pod's and a plugin's data
// in place and returns its clients.
func serve(t *testing.T) (*Sim, clients) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sim") // short: a unix socket path is at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := New(Config{})
	for _, p := range []string{pods + `\uid1\volumes\data`, plugins + `\pv1\globalmount`, hostmodel.EscapeTarget + `\secret`} {
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
	return s, clients{api.NewFilesystemClient(conn("filesystem-v1"), "v1"), api.NewVolumeClient(conn("volume-v1"), "v1"), api.NewSmbClient(conn("smb-v1"), "v1"),
		api.NewIscsiClient(conn("iscsi-v1alpha2"), "v1alpha2"), api.NewSystemClient(conn("system-v1alpha1"), "v1alpha1")}
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
	type call = func(clients) error
	rmdir := func(p string) call {
		return func(c clients) error {
			_, err := c.fs.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: p, Force: true})
			return err
		}
	}
	mkdir := func(p string) call {
		return func(c clients) error {
			_, err := c.fs.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: p})
			return err
		}
	}
	exists := func(p string) call {
		return func(c clients) error {
			_, err := c.fs.PathExists(ctx, &api.FilesystemPathExistsRequest{Path: p})
			return err
		}
	}
	smb := func(remote string) call {
		return func(c clients) error {
			_, err := c.smb.NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: remote, Username: "u", Password: "p"})
			return err
		}
	}
	escape := pods + `\` + hostmodel.EscapeLink
	for _, c := range []struct {
		name string
		do   call
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
		{`Mkdir two levels through a link leading outside (the issue's pods\<escape-link>\evil\deeper)`, mkdir(escape + `\evil\deeper`), "DIR-002"},
		{`PathExists of a missing path through a link leading outside`, exists(escape + `\gone\x`), "DIR-002"},
		{`PathExists of an existing path through a link leading outside`, exists(escape + `\secret`), "DIR-002"},
		{`IsSymlink of a link leading outside (its answer says whether the target exists)`, func(c clients) error {
			_, err := c.fs.IsSymlink(ctx, &api.FilesystemIsSymlinkRequest{Path: escape})
			return err
		}, "DIR-002"},
		{`Rmdir C:\VAR\LIB\KUBELET\PODS force (the pod path in upper case)`, rmdir(`C:\VAR\LIB\KUBELET\PODS`), "DIR-001"},
		{`Rmdir pods\.\ force (wipes the pod directories on csi-proxy)`, rmdir(pods + `\.\`), "PATH-009"},
		{`Rmdir the kubelet directory itself, force`, rmdir(`C:\var\lib\kubelet`), "DIR-001"},
		{`Mkdir C:\Windows\System32\evil`, mkdir(`C:\Windows\System32\evil`), "DIR-001"},
		{`Mkdir with a dotless i for i`, mkdir("C:\\var\\l\u0131b\\kubelet\\pods\\x"), "DIR-001"},
		{`Mkdir with a long s for s`, mkdir("C:\\var\\lib\\kubelet\\pod\u017f\\x"), "DIR-001"},
		{`Mkdir with a full-width letter`, mkdir("C:\\var\\lib\\kubelet\\\uff50ods\\x"), "DIR-001"},
		{`NewSmbGlobalMapping \\<this machine's FQDN>\share`, smb(`\\` + hostmodel.DefaultFQDN + `\share`), "SMB-005"},
		{`NewSmbGlobalMapping \\0x7f000001\share`, smb(`\\0x7f000001\share`), "SMB-005"},
		{`NewSmbGlobalMapping \\2130706433\share`, smb(`\\2130706433\share`), "SMB-005"},
		{`NewSmbGlobalMapping \\<full-width localhost>\share`, smb(`\\ｌｏｃａｌｈｏｓｔ\share`), "SMB-005"},
		{`CreateSymlink C:\Windows\System32 -> pods\x`, func(c clients) error {
			_, err := c.fs.CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: `C:\Windows\System32`, TargetPath: pods + `\uid1\x`})
			return err
		}, "LINK-001"},
		{`SetMutualChapSecret of 10 bytes`, func(c clients) error {
			_, err := c.iscsi.SetMutualChapSecret(ctx, &api.IscsiSetMutualChapSecretRequest{MutualChapSecret: "0123456789"})
			return err
		}, "CHAP-001"},
		{`StopService WinDefend`, func(c clients) error {
			_, err := c.sys.StopService(ctx, &api.SystemStopServiceRequest{Name: "WinDefend"})
			return err
		}, "SVC-001"},
		{`MountVolume onto C:\Windows\Temp`, func(c clients) error {
			_, err := c.vol.MountVolume(ctx, &api.VolumeMountVolumeRequest{VolumeId: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000001}\`, TargetPath: `C:\Windows\Temp`})
			return err
		}, "DIR-001"},
		{`MountVolume of the OS volume`, func(c clients) error {
			_, err := c.vol.MountVolume(ctx, &api.VolumeMountVolumeRequest{VolumeId: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`, TargetPath: pods + `\uid1\m`})
			return err
		}, "SYSDISK-001"},
		{`CreateSymlink to a link leading outside`, func(c clients) error {
			_, err := c.fs.CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: plugins + `\` + hostmodel.EscapeLink, TargetPath: pods + `\uid1\l`})
			return err
		}, "LINK-005"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, cl := serve(t)
			calls := s.Host.CommandCount()
			refusedBy(t, c.do(cl), c.rule)
			intact(t, s, calls)
			if got := s.Host.SMBMappings(); len(got) != 0 {
				t.Errorf("mappings left: %v", got)
			}
			for _, outside := range []string{hostmodel.EscapeTarget + `\evil`, `C:\Windows\System32\evil`, `C:\var\l\u0131b`} {
				if s.Host.Exists(outside) {
					t.Errorf("%s was made", outside)
				}
			}
		})
	}
}

// TestValidFormsAccepted: forms a host must accept, and the simulated host
// refused before: a share with a trailing separator, a volume ID as the
// KEP writes it, eui. and naa. target names.
func TestValidFormsAccepted(t *testing.T) {
	ctx := context.Background()
	s, c := serve(t)
	if _, err := c.smb.NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: hostmodel.DefaultSMBShare + `\`, Username: "u", Password: "p"}); err != nil {
		t.Errorf(`NewSmbGlobalMapping \\server\share\: %v`, err)
	}
	if _, err := c.smb.RemoveSmbGlobalMapping(ctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: hostmodel.DefaultSMBShare + `\`}); err != nil {
		t.Errorf(`RemoveSmbGlobalMapping \\server\share\: %v`, err)
	}
	if _, err := c.vol.IsVolumeFormatted(ctx, &api.VolumeIsVolumeFormattedRequest{VolumeId: `\\.\Volume{F3E9C0DE-0000-4000-8000-000000000000}`}); err != nil {
		t.Errorf(`IsVolumeFormatted \\.\Volume{GUID}: %v`, err)
	}
	portal := &api.IscsiTargetPortal{TargetAddress: hostmodel.DefaultPortal}
	if _, err := c.iscsi.AddTargetPortal(ctx, &api.IscsiAddTargetPortalRequest{TargetPortal: portal}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"eui.02004567A425678D", "naa.52004567BA64678D", "naa.62004567BA64678D0123456789ABCDEF"} {
		if _, err := c.iscsi.ConnectTarget(ctx, &api.IscsiConnectTargetRequest{TargetPortal: portal, Iqn: name}); err != nil {
			t.Errorf("ConnectTarget %s: %v", name, err)
		}
	}
	if len(s.Host.SMBMappings()) != 0 {
		t.Errorf("mappings left: %v", s.Host.SMBMappings())
	}
}
