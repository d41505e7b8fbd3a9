// Package apigen generates package csiproxy/api from csi-proxy's client
// stubs: for every API group it reads each version's service interface and
// messages (api/<group>/<version>/api.pb.go of
// github.com/kubernetes-csi/csi-proxy/client), merges the versions into one
// version-neutral set of request and response types per group, and writes
// for every version a server adapter (its gRPC service on a version-neutral
// handler) and a client adapter (the version-neutral client interface on
// its gRPC client), both converting messages. Methods and fields renamed
// between versions are matched by the alias tables below; everything else
// is matched by name.
package apigen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ClientModule is the module whose stubs are read.
const ClientModule = "github.com/kubernetes-csi/csi-proxy/client"

// methodAlias: per group, a method's older name and the name it has now
// (csi-proxy's servers forward one to the other).
var methodAlias = map[string]map[string]string{
	"disk":       {"DiskStats": "GetDiskStats", "SetAttachState": "SetDiskState", "GetAttachState": "GetDiskState"},
	"filesystem": {"LinkPath": "CreateSymlink", "IsMountPoint": "IsSymlink"},
	"volume": {"DismountVolume": "UnmountVolume", "VolumeStats": "GetVolumeStats",
		"GetVolumeDiskNumber": "GetDiskNumberFromVolumeID", "GetVolumeIDFromMount": "GetVolumeIDFromTargetPath"},
}

// fieldAlias: per group, "Message.OldName" (message by its current name,
// * for any) and the field's current name.
var fieldAlias = map[string]map[string]string{
	"disk":       {"*.DiskID": "DiskNumber", "GetDiskStatsResponse.DiskSize": "TotalBytes"},
	"filesystem": {"IsSymlinkResponse.IsMountPoint": "IsSymlink"},
	"volume": {"*.DiskId": "DiskNumber", "*.Path": "TargetPath", "*.Mount": "TargetPath",
		"ResizeVolumeRequest.Size": "SizeBytes", "GetVolumeStatsResponse.VolumeSize": "TotalBytes",
		"GetVolumeStatsResponse.VolumeUsedSize": "UsedBytes"},
}

// typ is a field's type.
type typ struct {
	kind string // basic, enum, msg, slice, map
	name string // basic type, enum or message name
	key  *typ   // map key
	elem *typ   // slice or map element
}

func (t *typ) String() string {
	switch t.kind {
	case "slice":
		return "[]" + t.elem.String()
	case "map":
		return "map[" + t.key.String() + "]" + t.elem.String()
	case "msg":
		return "*" + t.name
	}
	return t.name
}

type field struct {
	name  string // as in this version
	canon string
	t     *typ
}

type message struct {
	name, canon string
	fields      []field
}

type method struct {
	name, canon string
	req, resp   string // message names in this version
}

// version is one group version's stubs.
type version struct {
	group, name string
	service     string // e.g. Filesystem
	methods     []method
	messages    map[string]*message
	enums       map[string]bool
}

var versionRE = regexp.MustCompile(`^v([0-9]+)(?:(alpha|beta)([0-9]+))?$`)

// versionLess orders versions as Kubernetes does: by major, then alpha <
// beta < GA, then minor.
func versionLess(a, b string) bool {
	ka, kb := versionKey(a), versionKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}

func versionKey(v string) [3]int {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return [3]int{}
	}
	major, _ := strconv.Atoi(m[1])
	stage := map[string]int{"alpha": 0, "beta": 1, "": 2}[m[2]]
	minor, _ := strconv.Atoi(m[3])
	return [3]int{major, stage, minor}
}

// readModule reads every group and version below clientDir/api, versions
// oldest first.
func readModule(clientDir string) (map[string][]*version, error) {
	groups, err := os.ReadDir(filepath.Join(clientDir, "api"))
	if err != nil {
		return nil, err
	}
	out := map[string][]*version{}
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		vs, err := os.ReadDir(filepath.Join(clientDir, "api", g.Name()))
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if !v.IsDir() || !versionRE.MatchString(v.Name()) {
				continue
			}
			ver, err := readVersion(filepath.Join(clientDir, "api", g.Name(), v.Name(), "api.pb.go"), g.Name(), v.Name())
			if err != nil {
				return nil, err
			}
			out[g.Name()] = append(out[g.Name()], ver)
		}
		sort.Slice(out[g.Name()], func(i, j int) bool { return versionLess(out[g.Name()][i].name, out[g.Name()][j].name) })
	}
	return out, nil
}

func readVersion(path, group, name string) (*version, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	v := &version{group: group, name: name, messages: map[string]*message{}, enums: map[string]bool{}}
	structs := map[string]*ast.StructType{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			switch t := ts.Type.(type) {
			case *ast.Ident:
				if t.Name == "int32" {
					v.enums[ts.Name.Name] = true
				}
			case *ast.StructType:
				structs[ts.Name.Name] = t
			case *ast.InterfaceType:
				svc, ok := strings.CutSuffix(ts.Name.Name, "Server")
				if !ok || strings.HasPrefix(svc, "Unsafe") {
					continue
				}
				v.service = svc
				for _, m := range t.Methods.List {
					ft, ok := m.Type.(*ast.FuncType)
					if !ok || len(m.Names) == 0 || !m.Names[0].IsExported() {
						continue
					}
					req := ft.Params.List[1].Type.(*ast.StarExpr).X.(*ast.Ident).Name
					resp := ft.Results.List[0].Type.(*ast.StarExpr).X.(*ast.Ident).Name
					v.methods = append(v.methods, method{name: m.Names[0].Name, req: req, resp: resp})
				}
			}
		}
	}
	if v.service == "" {
		return nil, fmt.Errorf("%s: no service interface", path)
	}
	for n, st := range structs {
		if strings.HasPrefix(n, "Unimplemented") || !ast.IsExported(n) {
			continue
		}
		m := &message{name: n}
		for _, fl := range st.Fields.List {
			if len(fl.Names) == 0 || !fl.Names[0].IsExported() || strings.HasPrefix(fl.Names[0].Name, "XXX_") {
				continue
			}
			t, err := v.typeOf(fl.Type)
			if err != nil {
				return nil, fmt.Errorf("%s: %s.%s: %v", path, n, fl.Names[0].Name, err)
			}
			m.fields = append(m.fields, field{name: fl.Names[0].Name, t: t})
		}
		v.messages[n] = m
	}
	return v, nil
}

func (v *version) typeOf(e ast.Expr) (*typ, error) {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string", "bool", "int32", "int64", "uint32", "uint64", "float32", "float64":
			return &typ{kind: "basic", name: t.Name}, nil
		}
		return &typ{kind: "enum", name: t.Name}, nil
	case *ast.StarExpr:
		id, ok := t.X.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("unsupported pointer type")
		}
		return &typ{kind: "msg", name: id.Name}, nil
	case *ast.ArrayType:
		el, err := v.typeOf(t.Elt)
		return &typ{kind: "slice", elem: el}, err
	case *ast.MapType:
		k, err := v.typeOf(t.Key)
		if err != nil {
			return nil, err
		}
		el, err := v.typeOf(t.Value)
		return &typ{kind: "map", key: k, elem: el}, err
	}
	return nil, fmt.Errorf("unsupported type %T", e)
}
