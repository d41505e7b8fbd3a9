package winos

import (
	"google.golang.org/grpc/codes"
)

// PathExists is os.Lstat: a link counts whatever it points to.
func (o *OS) PathExists(path string) (bool, error) {
	o.H.Call("os.Lstat", path)
	_, err := o.H.Lstat(path)
	if err == nil {
		return true, nil
	}
	if e := fail(err, "lstat %s", path); Code(e) == codes.NotFound {
		return false, nil
	} else {
		return false, e
	}
}

// PathValid is Test-Path: whether every element of the path exists and is
// reachable (an SMB mapping whose server is gone is not).
func (o *OS) PathValid(path string) (bool, error) {
	o.run("PathValid", []string{path})
	_, err := o.H.Stat(path)
	return err == nil, nil
}

// Mkdir is os.MkdirAll.
func (o *OS) Mkdir(path string) error {
	o.H.Call("os.MkdirAll", path)
	return fail(o.H.MkdirAll(path), "mkdir %s", path)
}

// Rmdir is os.Remove, or os.RemoveAll with force.
func (o *OS) Rmdir(path string, force bool) error {
	if force {
		o.H.Call("os.RemoveAll", path)
		return fail(o.H.RemoveAll(path), "RemoveAll %s", path)
	}
	o.H.Call("os.Remove", path)
	return fail(o.H.Remove(path), "remove %s", path)
}

// RmdirContents removes everything inside a directory.
func (o *OS) RmdirContents(path string) error {
	o.H.Call("os.Open+RemoveAll", path)
	return fail(o.H.RemoveContents(path), "open %s", path)
}

// CreateSymlink is os.Symlink(oldname, newname): the link is made at
// newname and points to oldname.
func (o *OS) CreateSymlink(oldname, newname string) error {
	o.H.Call("os.Symlink", oldname, newname)
	return fail(o.H.Symlink(oldname, newname), "symlink %s %s", oldname, newname)
}

// IsSymlink is csi-proxy's: the path must exist; it is a link whose target
// (read with os.Readlink and checked with os.Lstat from the service's
// working directory) exists.
func (o *OS) IsSymlink(path string) (bool, error) {
	o.H.Call("os.Lstat", path)
	in, err := o.H.Lstat(path)
	if err != nil {
		return false, fail(err, "lstat %s", path)
	}
	if !in.Link {
		return false, nil
	}
	_, err = o.H.Lstat(in.Target)
	if err != nil && Code(fail(err, "")) != codes.NotFound {
		return false, fail(err, "lstat %s", in.Target)
	}
	return err == nil, nil
}
