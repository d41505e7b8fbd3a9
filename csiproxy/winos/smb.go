package winos

import "strings"

// IsSmbMapped is Get-SmbGlobalMapping's status: OK when mapped.
func (o *OS) IsSmbMapped(remotePath string) (bool, error) {
	o.run("IsSmbMapped", []string{remotePath})
	return o.H.SMBMapped(remotePath), nil
}

// NewSmbLink is New-Item -ItemType SymbolicLink at localPath pointing to
// remotePath with a trailing separator.
func (o *OS) NewSmbLink(remotePath, localPath string) error {
	if !strings.HasSuffix(remotePath, `\`) {
		remotePath += `\`
	}
	o.run("NewSmbLink", []string{remotePath, localPath})
	return fail(o.H.Symlink(remotePath, localPath), "error linking %s to %s", remotePath, localPath)
}

// NewSmbGlobalMapping is New-SmbGlobalMapping with the credentials.
func (o *OS) NewSmbGlobalMapping(remotePath, username, password string) error {
	o.run("NewSmbGlobalMapping", []string{username, password, remotePath})
	return fail(o.H.MapSMB(remotePath, username, password), "NewSmbGlobalMapping failed")
}

// RemoveSmbGlobalMapping is Remove-SmbGlobalMapping -Force.
func (o *OS) RemoveSmbGlobalMapping(remotePath string) error {
	o.run("RemoveSmbGlobalMapping", []string{remotePath})
	return fail(o.H.UnmapSMB(remotePath), "UnmountSmbShare failed")
}
