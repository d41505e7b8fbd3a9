package fault

import (
	"reflect"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Hostile hosts whose checks run on one path of the handler only: the
// branch a field no probe varies selects, the first field, one API
// version, a request with one bad field. Each is a bug a handler with an
// early return, a switch on an option or a copied adapter has.

// field is a named field of a version-neutral request: a string, a number
// or a bool as text ("" when the request has no such field).
func field(req any, name string) string {
	v := reflect.ValueOf(req)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName(name)
	if !f.IsValid() {
		return ""
	}
	if f.Kind() == reflect.Pointer && f.Type() == reflect.TypeOf(&api.IscsiTargetPortal{}) {
		if p := f.Interface().(*api.IscsiTargetPortal); p != nil {
			return p.TargetAddress
		}
		return ""
	}
	return strings.Join(StringFields(f.Interface()), "")
}

// boolField reads a bool field of a request.
func boolField(req any, name string) bool {
	v := reflect.ValueOf(req)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return false
	}
	f := v.FieldByName(name)
	return f.IsValid() && f.Kind() == reflect.Bool && f.Bool()
}

// smbLocalPathBranch checks remote_path only when no local_path is given:
// the branch that links the mapping to a local path was written first and
// never got the remote checks.
func smbLocalPathBranch(v *restrict.Violation, _ string, r Request, _ *Validator) bool {
	return strings.HasPrefix(v.Rule, "SMB-") && r.Method == "NewSmbGlobalMapping" && field(r.Req, "LocalPath") != ""
}

// iscsiCHAPBranch checks the portal and the target name only of
// connections without CHAP: the CHAP branches return early into their own
// Connect-IscsiTarget call.
func iscsiCHAPBranch(v *restrict.Violation, _ string, r Request, _ *Validator) bool {
	return (v.Rule == "ISCSI-001" || v.Rule == "ISCSI-002") && r.Method == "ConnectTarget" && field(r.Req, "AuthType") != "0"
}

// stopForceBranch stops a service with force without the allow-list
// check (the forced branch calls Stop-Service -Force first).
func stopForceBranch(v *restrict.Violation, _ string, r Request, _ *Validator) bool {
	return v.Rule == "SVC-001" && r.Method == "StopService" && boolField(r.Req, "Force")
}

// pathContextBranch takes a filesystem request of v1alpha1 or v1beta1
// with the pod path context (PathContext CONTAINER, 1) as the kubelet's
// own business and checks nothing.
func pathContextBranch(r Request) bool {
	return field(r.Req, "Context") == "1"
}

// checkedFields are the values of a request's fields of the RPC's
// checked kinds, with a portal's port, skipping empty ones (an unset
// optional local path).
func checkedFields(r Request) (kinds []restrict.Kind, values []string, ports []uint32) {
	for _, rpc := range restrict.RPCs {
		if rpc.Method != r.Method {
			continue
		}
		for _, f := range rpc.Fields {
			if f.Kind == restrict.KindFree {
				continue
			}
			val := field(r.Req, f.Name)
			var port uint32
			if f.Kind == restrict.KindPortal {
				v := reflect.ValueOf(r.Req).Elem().FieldByName(f.Name)
				if p, ok := v.Interface().(*api.IscsiTargetPortal); ok && p != nil {
					port = p.TargetPort
				}
			}
			if val != "" || f.Kind == restrict.KindPortal {
				kinds, values, ports = append(kinds, f.Kind), append(values, val), append(ports, port)
			}
		}
	}
	return kinds, values, ports
}

// loneViolation refuses a request only when exactly one of its checked
// fields is bad (the shape of a conformance probe: one bad field, the
// others valid) and takes a request with several bad fields for a
// driver's own odd but harmless call.
func loneViolation(_ *restrict.Violation, _ string, r Request, h *Validator) bool {
	kinds, values, ports := checkedFields(r)
	bad := 0
	for i := range kinds {
		if h.Check(kinds[i], values[i], ports[i]) != nil {
			bad++
		}
	}
	return bad >= 2
}

// firstFieldOnly checks only the first checked field of an RPC
// (CreateSymlink's source, MountVolume's volume ID, the SMB remote path,
// the iSCSI portal).
func firstFieldOnly(_ *restrict.Violation, value string, r Request, _ *Validator) bool {
	_, values, _ := checkedFields(r)
	return len(values) > 1 && value != values[0]
}
