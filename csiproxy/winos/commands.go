// Package winos is the Windows layer csi-proxy v1.1.3 calls (its pkg/os
// packages: os.MkdirAll, os.Symlink, the storage, SMB, iSCSI and service
// cmdlets), performed on a hostmodel.Host. Every PowerShell command line
// csi-proxy would build is built here from the same script text, with the
// same request fields passed as environment variables, and handed to the
// host's PowerShell, which runs any injection canary the script carries.
//
// OS implements the host-API interfaces of csi-proxy's servers
// (pkg/os/filesystem.API, pkg/os/smb.API, pkg/os/volume.API,
// pkg/os/disk.API, pkg/server/iscsi.API, pkg/server/system.API), so the
// reference lane serves csi-proxy's own server code over it, and the
// simulated host uses it as its Windows. Its errors never carry a gRPC
// code (csi-proxy's do not: a client sees UNKNOWN); Code recovers the
// model's code for a server that wants one.
package winos

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

// Script is one command line csi-proxy v1.1.3 builds: the script text as
// in its source (a %d is a number csi-proxy formats in) and the
// environment variables the script reads, one per request field.
type Script struct {
	Text string
	Env  []string
}

// Scripts is every PowerShell script csi-proxy v1.1.3's pkg/os runs, by
// the operation that runs it; TestScriptsAreCSIProxys finds each text in
// csi-proxy's source.
var Scripts = map[string]Script{
	"PathValid":                 {`Test-Path $Env:remotepath`, []string{"remotepath"}},
	"IsSmbMapped":               {`$(Get-SmbGlobalMapping -RemotePath $Env:smbremotepath -ErrorAction Stop).Status `, []string{"smbremotepath"}},
	"NewSmbLink":                {`New-Item -ItemType SymbolicLink $Env:smblocalPath -Target $Env:smbremotepath`, []string{"smbremotepath", "smblocalpath"}},
	"NewSmbGlobalMapping":       {`$PWord = ConvertTo-SecureString -String $Env:smbpassword -AsPlainText -Force;$Credential = New-Object -TypeName System.Management.Automation.PSCredential -ArgumentList $Env:smbuser, $PWord;New-SmbGlobalMapping -RemotePath $Env:smbremotepath -Credential $Credential -RequirePrivacy $true`, []string{"smbuser", "smbpassword", "smbremotepath"}},
	"RemoveSmbGlobalMapping":    {`Remove-SmbGlobalMapping -RemotePath $Env:smbremotepath -Force`, []string{"smbremotepath"}},
	"ListVolumesOnDisk":         {`(Get-Disk -Number %d | Get-Partition | Get-Volume).UniqueId`, nil},
	"ListVolumesOnPartition":    {`(Get-Disk -Number %d | Get-Partition -PartitionNumber %d | Get-Volume).UniqueId`, nil},
	"FormatVolume":              {`Get-Volume -UniqueId "$Env:volumeID" | Format-Volume -FileSystem ntfs -Confirm:$false`, []string{"volumeID"}},
	"IsVolumeFormatted":         {`(Get-Volume -UniqueId "$Env:volumeID" -ErrorAction Stop).FileSystemType`, []string{"volumeID"}},
	"MountVolume":               {`Get-Volume -UniqueId "$Env:volumeID" | Get-Partition | Add-PartitionAccessPath -AccessPath $Env:mountpath`, []string{"volumeID", "mountpath"}},
	"UnmountVolume":             {`Get-Volume -UniqueId "$Env:volumeID" | Get-Partition | Remove-PartitionAccessPath -AccessPath $Env:mountpath`, []string{"volumeID", "mountpath"}},
	"WriteVolumeCache":          {`Get-Volume -UniqueId "$Env:volumeID" | Write-Volumecache`, []string{"volumeID"}},
	"ResizeVolumeMax":           {`Get-Volume -UniqueId "$Env:volumeID" | Get-partition | Get-PartitionSupportedSize | Select SizeMax | ConvertTo-Json`, []string{"volumeID"}},
	"VolumeSize":                {`(Get-Volume -UniqueId "$Env:volumeID" | Get-partition).Size`, []string{"volumeID"}},
	"ResizeVolume":              {`Get-Volume -UniqueId "$Env:volumeID" | Get-Partition | Resize-Partition -Size %d`, []string{"volumeID"}},
	"GetVolumeStats":            {`(Get-Volume -UniqueId "$Env:volumeID" | Select SizeRemaining,Size) | ConvertTo-Json`, []string{"volumeID"}},
	"GetDiskNumberFromVolumeID": {`(Get-Volume -UniqueId "$Env:volumeID" | Get-Partition).DiskNumber`, []string{"volumeID"}},
	"GetItemTarget":             {`(Get-Item -Path $Env:mountpath).Target`, []string{"mountpath"}},
	"DereferenceSymlink":        {`(Get-Item -Path $Env:linkpath).Target`, []string{"linkpath"}},
	"VolumeForDriveLetter":      {`(Get-Partition -DriveLetter $Env:drivepath | Get-Volume).UniqueId`, []string{"drivepath"}},
	"ListDiskLocations":         {`ConvertTo-Json @(Get-Disk | select Number, Location)`, nil},
	"Rescan":                    {`Update-HostStorageCache`, nil},
	"IsDiskInitialized":         {`Get-Disk -Number %d | Where partitionstyle -eq 'raw'`, nil},
	"InitializeDisk":            {`Initialize-Disk -Number %d -PartitionStyle GPT`, nil},
	"BasicPartitionsExist":      {`Get-Partition | Where DiskNumber -eq %d | Where Type -ne Reserved`, nil},
	"CreateBasicPartition":      {`New-Partition -DiskNumber %d -UseMaximumSize`, nil},
	"ListDiskPaths":             {`ConvertTo-Json @(Get-Disk | Select Path)`, nil},
	"ListDiskIDs":               {`ConvertTo-Json @(Get-Disk | Select Path, SerialNumber)`, nil},
	"GetDiskStats":              {`(Get-Disk -Number %d).Size`, nil},
	"SetDiskState":              {`(Get-Disk -Number %d) | Set-Disk -IsOffline $%t`, nil},
	"GetDiskState":              {`(Get-Disk -Number %d) | Select-Object -ExpandProperty IsOffline`, nil},
	"AddTargetPortal":           {`New-IscsiTargetPortal -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port}`, []string{"iscsi_tp_address", "iscsi_tp_port"}},
	"DiscoverTargetPortal":      {`ConvertTo-Json -InputObject @(Get-IscsiTargetPortal -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port} | Get-IscsiTarget | Select-Object -ExpandProperty NodeAddress)`, []string{"iscsi_tp_address", "iscsi_tp_port"}},
	"ListTargetPortals":         {`ConvertTo-Json -InputObject @(Get-IscsiTargetPortal | Select-Object TargetPortalAddress, TargetPortalPortNumber)`, nil},
	"RemoveTargetPortal":        {`Get-IscsiTargetPortal -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port} | Remove-IscsiTargetPortal -Confirm:$false`, []string{"iscsi_tp_address", "iscsi_tp_port"}},
	"ConnectTarget":             {`Connect-IscsiTarget -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port} -NodeAddress ${Env:iscsi_target_iqn} -AuthenticationType ${Env:iscsi_auth_type}`, []string{"iscsi_tp_address", "iscsi_tp_port", "iscsi_target_iqn", "iscsi_auth_type", "iscsi_chap_user", "iscsi_chap_secret"}},
	"ConnectTargetChapUser":     {` -ChapUsername ${Env:iscsi_chap_user}`, nil},
	"ConnectTargetChapSecret":   {` -ChapSecret ${Env:iscsi_chap_secret}`, nil},
	"DisconnectTarget":          {`Disconnect-IscsiTarget -InputObject (Get-IscsiTargetPortal -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port}  | Get-IscsiTarget | Where-Object { $_.NodeAddress -eq ${Env:iscsi_target_iqn} }) -Confirm:$false`, []string{"iscsi_tp_address", "iscsi_tp_port", "iscsi_target_iqn"}},
	"GetTargetDisks":            {`$ErrorActionPreference = "Stop"; $tp = Get-IscsiTargetPortal -TargetPortalAddress ${Env:iscsi_tp_address} -TargetPortalPortNumber ${Env:iscsi_tp_port}; $t = $tp | Get-IscsiTarget | Where-Object { $_.NodeAddress -eq ${Env:iscsi_target_iqn} }; $c = Get-IscsiConnection -IscsiTarget $t; $ids = $c | Get-Disk | Select -ExpandProperty Number | Out-String -Stream; ConvertTo-Json -InputObject @($ids)`, []string{"iscsi_tp_address", "iscsi_tp_port", "iscsi_target_iqn"}},
	"SetMutualChapSecret":       {`Set-IscsiChapSecret -ChapSecret ${Env:iscsi_mutual_chap_secret}`, []string{"iscsi_mutual_chap_secret"}},
	"GetService":                {`Get-Service -Name $env:ServiceName | Select-Object DisplayName, Status, StartType | ConvertTo-JSON`, []string{"ServiceName"}},
	"StartService":              {`Start-Service -Name $env:ServiceName`, []string{"ServiceName"}},
	"StopService":               {`Stop-Service -Name $env:ServiceName -Force:$([System.Convert]::ToBoolean($env:Force))`, []string{"ServiceName", "Force"}},
}

// Fields names the request field each environment variable carries, for
// reports.
var Fields = map[string]string{
	"remotepath": "remote_path", "smbremotepath": "remote_path", "smblocalpath": "local_path",
	"smbuser": "username", "smbpassword": "password", "volumeID": "volume_id", "mountpath": "target_path",
	"linkpath": "target_path", "drivepath": "target_path", "iscsi_tp_address": "target_portal.target_address",
	"iscsi_tp_port": "target_portal.target_port", "iscsi_target_iqn": "iqn", "iscsi_auth_type": "auth_type",
	"iscsi_chap_user": "chap_username", "iscsi_chap_secret": "chap_secret",
	"iscsi_mutual_chap_secret": "MutualChapSecret", "ServiceName": "name", "Force": "force",
}

// OS is csi-proxy v1.1.3's Windows layer on a simulated host.
type OS struct {
	H *hostmodel.Host
	// Interpolate holds environment variables whose value this OS splices
	// into the script text in place of the variable, the way csi-proxy
	// before v1.1.3 formatted request fields into its command lines
	// (CVE-2023-3893): a fault, for the injection rule to catch.
	Interpolate map[string]bool
}

// New returns csi-proxy's Windows layer on h.
func New(h *hostmodel.Host) *OS { return &OS{H: h} }

// run builds and runs one script with its environment values (one per
// Script.Env entry, in order) and the numbers formatted into its text.
func (o *OS) run(op string, values []string, nums ...any) {
	s, ok := Scripts[op]
	if !ok {
		panic("winos: no script " + op)
	}
	text := s.Text
	if len(nums) > 0 {
		text = fmt.Sprintf(text, nums...)
	}
	o.runText(text, s.Env, values)
}

// runText runs a script text with the named environment variables.
func (o *OS) runText(text string, names, values []string) {
	env := make([]string, 0, len(names))
	for i, name := range names {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		if o.Interpolate[name] {
			text = interpolate(text, name, v)
			continue
		}
		env = append(env, name+"="+v)
	}
	o.H.PowerShell(text, env...)
}

// interpolate replaces every reference to the environment variable name
// ($Env:name, ${Env:name}, any case) with value.
func interpolate(text, name, value string) string {
	for _, ref := range []string{"${Env:" + name + "}", "$Env:" + name} {
		for {
			i := strings.Index(strings.ToLower(text), strings.ToLower(ref))
			if i < 0 {
				break
			}
			text = text[:i] + value + text[i+len(ref):]
		}
	}
	return text
}

// Error is a failure of a Windows call: a message, as csi-proxy's are, and
// the model's code, which Code recovers (a gRPC server never sees it).
type Error struct {
	Code codes.Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Code is the model's code of an error this package returned (UNKNOWN for
// any other error, OK for nil).
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return codes.Unknown
}

// fail wraps a host error the way csi-proxy wraps its cmdlets' output.
func fail(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	return &Error{Code: status.Code(err), Msg: fmt.Sprintf(format, args...) + ": " + msg}
}
