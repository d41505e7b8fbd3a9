package conformance

import (
	"context"
	"fmt"
	"reflect"
	"strconv"

	"github.com/fenceproof/fenceproof/csiproxy/api"
)

// client is the version-neutral client of one served group version.
func (s *state) client(gv api.GroupVersion) any {
	c := s.conns[gv.PipeBase()]
	switch gv.Group {
	case "disk":
		return api.NewDiskClient(c, gv.Version)
	case "filesystem":
		return api.NewFilesystemClient(c, gv.Version)
	case "iscsi":
		return api.NewIscsiClient(c, gv.Version)
	case "smb":
		return api.NewSmbClient(c, gv.Version)
	case "system":
		return api.NewSystemClient(c, gv.Version)
	case "volume":
		return api.NewVolumeClient(c, gv.Version)
	}
	panic("conformance: unknown group " + gv.Group)
}

// newRequest returns a zero request of a client's method.
func newRequest(client any, method string) any {
	m := reflect.ValueOf(client).MethodByName(method)
	return reflect.New(m.Type().In(1).Elem()).Interface()
}

// invoke calls a client's method by its version-neutral name.
func invoke(ctx context.Context, client any, method string, req any) error {
	m := reflect.ValueOf(client).MethodByName(method)
	out := m.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})
	err, _ := out[1].Interface().(error)
	return err
}

// setField sets one request field from a case value: a string, a number
// (a disk), or a target portal (address and port).
func setField(req any, field, value string, port uint32) error {
	f := reflect.ValueOf(req).Elem().FieldByName(field)
	switch {
	case !f.IsValid():
		return fmt.Errorf("%T has no field %s", req, field)
	case f.Kind() == reflect.String:
		f.SetString(value)
	case f.Kind() == reflect.Uint32:
		n, err := strconv.ParseUint(value, 10, 32)
		if err != nil {
			return fmt.Errorf("%s: %q is not a number", field, value)
		}
		f.SetUint(n)
	case f.Type() == reflect.TypeOf(&api.IscsiTargetPortal{}):
		f.Set(reflect.ValueOf(&api.IscsiTargetPortal{TargetAddress: value, TargetPort: port}))
	default:
		return fmt.Errorf("%T.%s: cannot set a %s", req, field, f.Kind())
	}
	return nil
}

// fieldOf reads a string request field ("" for another type).
func fieldOf(req any, name string) string {
	f := reflect.ValueOf(req).Elem().FieldByName(name)
	if f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// fs is the newest served filesystem client, for the suite's own setup and
// cleanup; nil when none is served.
func (s *state) fs() api.FilesystemClient {
	for _, gv := range s.of("filesystem", "") {
		return api.NewFilesystemClient(s.conns[gv.PipeBase()], gv.Version)
	}
	return nil
}

// mkdir and rmdir are the suite's own setup and cleanup.
func (s *state) mkdir(ctx context.Context, p string) error {
	fs := s.fs()
	if fs == nil {
		return fmt.Errorf("no filesystem version is served")
	}
	_, err := fs.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: p})
	return err
}

// rmdir removes, forced, only what the suite named (a path holding a
// fresh name the run drew): a host that accepts anything must not be
// asked to delete anything else.
func (s *state) rmdir(ctx context.Context, p string) {
	if !s.draw.Issued(p) {
		return
	}
	if fs := s.fs(); fs != nil {
		_, _ = fs.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: p, Force: true})
	}
}

// unlink removes a link (never forced: a link is removed without what it
// points to).
func (s *state) unlink(ctx context.Context, p string) {
	if fs := s.fs(); fs != nil && p != "" {
		_, _ = fs.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: p})
	}
}

func (s *state) exists(ctx context.Context, p string) (bool, error) {
	fs := s.fs()
	if fs == nil {
		return false, fmt.Errorf("no filesystem version is served")
	}
	r, err := fs.PathExists(ctx, &api.FilesystemPathExistsRequest{Path: p})
	if err != nil {
		return false, err
	}
	return r.Exists, nil
}
